/**
 * One client-node informer (ListWatch) per resource and namespace, kept alive.
 *
 * client-node relists by itself after a 410 (expired resourceVersion, as HTTP status or as an
 * in-stream ERROR event) and re-opens a watch that simply ended. On any other error — a 500, a
 * reset connection, a failed list — it stops for good and reports `error`; this wrapper restarts
 * it with exponential backoff. The restart watches on from the informer's last resourceVersion,
 * so no event is lost (and if that version has expired meanwhile, the 410 path relists and
 * reports the difference as add/update/delete). `stop()` makes the informer report an
 * AbortError: that one is ours and is not restarted.
 */
import {
  ListWatch,
  Watch,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { backoff } from '../backoff.js';
import type { Clock } from './clock.js';
import { kubeGet } from './kube-http.js';
import { collectionPath, type ResourceSpec } from './resources.js';

type Raw = Record<string, unknown>;

export interface InformerHandlers {
  upsert(raw: Raw): void;
  remove(raw: Raw): void;
  /** The first complete list was delivered. */
  synced(): void;
  /**
   * A relist came back empty where `kept` objects were listed before (a lost RBAC rule, a deleted
   * CRD, an API server answering from an empty cache): those objects are kept, not deleted.
   */
  emptied?(kept: number): void;
  /** A later list had objects again: the kept ones were replaced by what it listed. */
  refilled?(): void;
  error(err: unknown, restartInMs: number): void;
  /** A restart after errors listed and watched again. */
  recovered?(): void;
}

export interface BackoffOptions {
  /** First restart delay (default 500 ms), doubled per failure up to `maxMs` (default 30 s). */
  readonly initialMs?: number;
  readonly maxMs?: number;
}

export class ResourceInformer {
  readonly id: string;
  private readonly lw: ListWatch<KubernetesObject>;
  private stopped = false;
  private failures = 0;
  private errorsSeen = 0;
  private restartTimer: unknown = null;
  private isSynced = false;
  /** The last relist was empty and the objects listed before it are kept. */
  private keptEmpty = false;

  constructor(
    kc: KubeConfig,
    readonly spec: ResourceSpec,
    readonly version: string,
    readonly namespace: string | undefined,
    private readonly handlers: InformerHandlers,
    private readonly clock: Clock,
    private readonly backoff: BackoffOptions = {},
  ) {
    const path = collectionPath(spec, version, namespace);
    this.id = `${spec.kind}${(spec.namespace ?? namespace) ? ` in ${spec.namespace ?? namespace}` : ''} (${spec.group ? `${spec.group}/` : ''}${version})`;
    const apiVersion = spec.group ? `${spec.group}/${version}` : version;
    const query: Record<string, string> = spec.fieldSelector ? { fieldSelector: spec.fieldSelector } : {};
    // Lists of built-in types omit kind/apiVersion on items (as kube-apiserver does); put them back.
    const list = async (): Promise<KubernetesListObject<KubernetesObject>> => {
      const body = (await kubeGet(kc, path, query)) as { metadata?: { resourceVersion?: string }; items?: Raw[] };
      const items = (body.items ?? []).map((i) => ({ ...i, kind: spec.kind, apiVersion }) as KubernetesObject);
      const listedBefore = this.lw.list();
      if (items.length === 0 && listedBefore.length > 0) {
        // The publish guard's informer check: keep the last good objects of this kind.
        this.keptEmpty = true;
        this.handlers.emptied?.(listedBefore.length);
        return {
          metadata: { resourceVersion: body.metadata?.resourceVersion ?? '' },
          items: [...listedBefore],
        } as KubernetesListObject<KubernetesObject>;
      }
      if (this.keptEmpty && items.length > 0) {
        this.keptEmpty = false;
        this.handlers.refilled?.();
      }
      return {
        metadata: { resourceVersion: body.metadata?.resourceVersion ?? '' },
        items,
      } as KubernetesListObject<KubernetesObject>;
    };
    this.lw = new ListWatch(path, new Watch(kc), list, false, undefined, spec.fieldSelector);
    // Watch events carry kind/apiVersion; fill them in anyway so every object names its kind.
    const typed = (o: KubernetesObject): Raw => ({ ...(o as Raw), kind: spec.kind, apiVersion });
    this.lw.on('add', (o) => {
      this.handlers.upsert(typed(o));
      keepIdentityOnly(o);
    });
    this.lw.on('update', (o) => {
      this.handlers.upsert(typed(o));
      keepIdentityOnly(o);
    });
    this.lw.on('delete', (o) => this.handlers.remove(typed(o)));
    this.lw.on('error', (err) => this.onError(err));
  }

  get synced(): boolean {
    return this.isSynced;
  }

  start(): void {
    this.stopped = false;
    void this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.restartTimer !== null) this.clock.clearTimeout(this.restartTimer);
    this.restartTimer = null;
    await this.lw.stop();
  }

  private async run(): Promise<void> {
    const errorsBefore = this.errorsSeen;
    try {
      await this.lw.start();
    } catch (err) {
      this.onError(err);
      return;
    }
    // start() resolves once the list is applied and the watch is open — unless it failed, which
    // it reports through `error` rather than by rejecting.
    if (this.stopped || this.errorsSeen !== errorsBefore) return;
    if (this.failures > 0) this.handlers.recovered?.();
    this.failures = 0;
    if (!this.isSynced) {
      this.isSynced = true;
      this.handlers.synced();
    }
  }

  private onError(err: unknown): void {
    if (this.stopped) return; // our own stop(): an AbortError, not a failure
    this.errorsSeen++;
    if (this.restartTimer !== null) return;
    this.failures++;
    const delay = backoff(this.failures, {
      baseMs: this.backoff.initialMs ?? 500,
      maxMs: this.backoff.maxMs ?? 30_000,
      jitter: 'none',
    });
    this.handlers.error(err, delay);
    this.restartTimer = this.clock.setTimeout(() => {
      this.restartTimer = null;
      if (!this.stopped) void this.run();
    }, delay);
  }
}

/**
 * client-node's ListWatch keeps every object it delivered, and reads of it only the metadata's
 * name, namespace (its index) and resourceVersion (an unchanged version is not an update; a relist
 * deletes what it no longer lists). Once the handlers have the object — the object cache keeps its
 * canonical form — the informer's copy is cut down to those, so the watcher does not hold a second
 * full copy (with managedFields, status, …) of every object. The handlers' own copy (`typed`) keeps
 * the original members. Without a resourceVersion the copy is kept whole: a relist would compare
 * and re-deliver it.
 */
export function keepIdentityOnly(o: KubernetesObject): void {
  const meta = o.metadata;
  const resourceVersion = meta?.resourceVersion;
  if (!meta || typeof resourceVersion !== 'string' || resourceVersion === '') return;
  for (const k of Object.keys(o)) if (k !== 'metadata') delete (o as Raw)[k];
  o.metadata = {
    ...(meta.name !== undefined ? { name: meta.name } : {}),
    ...(meta.namespace !== undefined ? { namespace: meta.namespace } : {}),
    resourceVersion,
  };
}

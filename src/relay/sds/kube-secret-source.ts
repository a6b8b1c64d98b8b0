/**
 * Secrets read live from the Kubernetes API: one client-node informer per watched namespace
 * (list + watch of `/api/v1/namespaces/<ns>/secrets`), restarted with backoff when it stops on an
 * error other than an expired resourceVersion (client-node relists by itself after a 410). Needs
 * RBAC `get`, `list`, `watch` on `secrets` in those namespaces only (infra/k8s).
 */
import type { KubeConfig, KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';
import { backoff } from '../../backoff.js';
import type { RelayLogger } from '../log.js';
import { errorMessage } from '../log.js';
import { kubeJson } from '../security/kube-requests.js';
import type { HeldSecret, SecretSource } from './secret-source.js';

interface RawSecret extends KubernetesObject {
  readonly data?: Readonly<Record<string, string>>;
}

interface Watched {
  readonly namespace: string;
  stop(): Promise<void>;
}

export interface KubeSecretSourceOptions {
  readonly kubeConfig: KubeConfig;
  /** When given, only these namespaces may be watched (the others are refused); else any. */
  readonly namespaces?: readonly string[];
  readonly log: RelayLogger;
}

export class KubeSecretSource implements SecretSource {
  private readonly secrets = new Map<string, HeldSecret>();
  private readonly watched = new Map<string, Watched>();
  private readonly listeners: ((namespace: string, name: string) => void)[] = [];
  private closed = false;

  constructor(private readonly opts: KubeSecretSourceOptions) {
    for (const ns of opts.namespaces ?? []) this.watch(ns);
  }

  get(namespace: string, name: string): HeldSecret | undefined {
    return this.secrets.get(`${namespace}/${name}`);
  }

  onChange(listener: (namespace: string, name: string) => void): void {
    this.listeners.push(listener);
  }

  watch(namespace: string): boolean {
    if (this.closed) return false;
    if (this.watched.has(namespace)) return true;
    if (this.opts.namespaces && !this.opts.namespaces.includes(namespace)) return false;
    this.watched.set(namespace, this.startInformer(namespace));
    return true;
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.watched.values()].map((w) => w.stop()));
    this.watched.clear();
    this.secrets.clear();
  }

  private changed(namespace: string, name: string): void {
    for (const l of this.listeners) l(namespace, name);
  }

  private startInformer(namespace: string): Watched {
    const { kubeConfig: kc, log } = this.opts;
    const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets`;
    let stopped = false;
    let failures = 0;
    let timer: NodeJS.Timeout | undefined;
    let informer: Awaited<ReturnType<typeof makeSecretInformer>> | undefined;
    const upsert = (s: RawSecret): void => {
      const name = s.metadata?.name;
      if (!name) return;
      const data: Record<string, Buffer> = {};
      for (const [k, v] of Object.entries(s.data ?? {})) data[k] = Buffer.from(v, 'base64');
      const revision = `${s.metadata?.uid ?? ''}/${s.metadata?.resourceVersion ?? ''}`;
      this.secrets.set(`${namespace}/${name}`, { data, revision });
      this.changed(namespace, name);
    };
    const remove = (s: RawSecret): void => {
      const name = s.metadata?.name;
      if (!name) return;
      this.secrets.delete(`${namespace}/${name}`);
      this.changed(namespace, name);
    };
    const start = async (): Promise<void> => {
      informer ??= await makeSecretInformer(kc, path);
      informer.on('add', upsert);
      informer.on('update', upsert);
      informer.on('delete', remove);
      informer.on('connect', () => {
        if (failures > 0) log.log('info', 'sds.informer_recovered', { namespace });
        failures = 0;
      });
      informer.on('error', (err: unknown) => {
        if (stopped || (err as Error | undefined)?.name === 'AbortError') return;
        failures++;
        const inMs = backoff(failures, { baseMs: 500, maxMs: 30_000, jitter: 'full' });
        log.log('warn', 'sds.informer_restart', { namespace, error: errorMessage(err), inMs });
        timer = setTimeout(() => void informer?.start().catch(() => {}), inMs);
        timer.unref();
      });
      await informer.start();
    };
    log.log('info', 'sds.watch', { namespace });
    void start().catch((e: unknown) => log.log('warn', 'sds.informer_failed', { namespace, error: errorMessage(e) }));
    return {
      namespace,
      stop: async () => {
        stopped = true;
        if (timer) clearTimeout(timer);
        await informer?.stop();
      },
    };
  }
}

/** client-node's informer with a raw-JSON list (watch events are raw JSON too: one object shape). */
async function makeSecretInformer(kc: KubeConfig, path: string) {
  const { makeInformer } = await import('@kubernetes/client-node');
  const list = async (): Promise<KubernetesListObject<RawSecret>> => {
    const body = (await kubeJson(kc, 'GET', path, undefined, 60_000)) as {
      metadata?: { resourceVersion?: string };
      items?: RawSecret[];
    };
    return {
      apiVersion: 'v1',
      kind: 'SecretList',
      metadata: { resourceVersion: body.metadata?.resourceVersion ?? '' },
      items: (body.items ?? []).map((i) => ({ ...i, apiVersion: 'v1', kind: 'Secret' })),
    };
  };
  return makeInformer<RawSecret>(kc, path, list);
}

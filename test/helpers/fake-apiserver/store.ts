/**
 * The fake API server's storage: objects, one global monotonically increasing resourceVersion (as
 * etcd's revision) and a bounded history of watch events. A watch may start from any revision
 * still covered by the history; older ones are "expired" (410 Gone), exactly the case that makes
 * an informer relist.
 */
import type { ResourceType } from './catalog.js';

export interface ObjectMeta {
  name: string;
  namespace?: string;
  resourceVersion?: string;
  uid?: string;
  generation?: number;
  creationTimestamp?: string;
  labels?: Record<string, string>;
  [key: string]: unknown;
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoredEvent {
  readonly rv: number;
  readonly type: EventType;
  readonly resource: ResourceType;
  readonly object: KubeObject;
}

export type Listener = (e: StoredEvent) => void;

const clone = <T>(v: T): T => structuredClone(v);

/** The part of an object a client controls; equal content means an update is a no-op, as in the real server. */
function content(o: KubeObject): string {
  const { resourceVersion: _rv, uid: _uid, generation: _g, creationTimestamp: _c, ...meta } = o.metadata;
  return JSON.stringify({ ...o, apiVersion: '', metadata: meta });
}

function specOf(o: KubeObject): string {
  const { metadata: _m, status: _s, apiVersion: _a, ...rest } = o;
  return JSON.stringify(rest);
}

export class ObjectStore {
  private rv: number;
  /** Watches from a revision below this are expired; history holds every event with rv > floor. */
  private floor: number;
  private readonly objects = new Map<string, { resource: ResourceType; object: KubeObject }>();
  private history: StoredEvent[] = [];
  private readonly listeners = new Set<Listener>();
  private uids = 0;

  constructor(
    private readonly historyLimit: number,
    startRv: number,
    private readonly now: () => Date,
  ) {
    this.rv = startRv;
    this.floor = startRv;
  }

  currentRv(): number {
    return this.rv;
  }

  oldestWatchableRv(): number {
    return this.floor;
  }

  private static key(r: ResourceType, ns: string, name: string): string {
    return `${r.group}/${r.plural}/${r.namespaced ? ns : ''}/${name}`;
  }

  /** Creates or updates; a no-op update changes nothing (no new revision, no event). */
  apply(resource: ResourceType, input: KubeObject): KubeObject {
    const obj = clone(input);
    if (!resource.namespaced) delete obj.metadata.namespace;
    else obj.metadata.namespace ??= 'default';
    const key = ObjectStore.key(resource, obj.metadata.namespace ?? '', obj.metadata.name);
    const prev = this.objects.get(key)?.object;
    if (prev && content(prev) === content({ ...obj, apiVersion: prev.apiVersion })) return clone(prev);
    obj.metadata.uid = prev?.metadata.uid ?? `00000000-0000-4000-8000-${String(++this.uids).padStart(12, '0')}`;
    obj.metadata.creationTimestamp =
      prev?.metadata.creationTimestamp ??
      this.now()
        .toISOString()
        .replace(/\.\d+Z$/, 'Z');
    const prevGen = prev?.metadata.generation ?? 0;
    obj.metadata.generation = prev && specOf(prev) === specOf(obj) ? prevGen : prevGen + 1;
    obj.metadata.resourceVersion = String(++this.rv);
    this.objects.set(key, { resource, object: obj });
    this.record({ rv: this.rv, type: prev ? 'MODIFIED' : 'ADDED', resource, object: obj });
    return clone(obj);
  }

  /**
   * A write of the status subresource, as kube-apiserver's status strategy does it: only `status`
   * changes (spec, labels, … of the request are ignored), the generation stays, and a request
   * carrying a resourceVersion other than the object's is a conflict. An unchanged status writes
   * nothing (no new revision, no event).
   */
  writeStatus(
    resource: ResourceType,
    ns: string,
    name: string,
    status: unknown,
    resourceVersion: string | undefined,
  ): KubeObject | 'not-found' | 'conflict' {
    const key = ObjectStore.key(resource, resource.namespaced ? ns : '', name);
    const found = this.objects.get(key);
    if (!found) return 'not-found';
    if (
      resourceVersion !== undefined &&
      resourceVersion !== '' &&
      resourceVersion !== found.object.metadata.resourceVersion
    )
      return 'conflict';
    const prev = found.object;
    const next: KubeObject = clone({ ...prev, status });
    if (status === undefined) delete next.status;
    if (JSON.stringify(prev.status) === JSON.stringify(next.status)) return clone(prev);
    next.metadata.resourceVersion = String(++this.rv);
    this.objects.set(key, { resource, object: next });
    this.record({ rv: this.rv, type: 'MODIFIED', resource, object: next });
    return clone(next);
  }

  /** Deletes; the DELETED event carries the object's last state at the deletion's revision. */
  delete(resource: ResourceType, ns: string, name: string): KubeObject | undefined {
    const key = ObjectStore.key(resource, ns, name);
    const found = this.objects.get(key);
    if (!found) return undefined;
    this.objects.delete(key);
    const obj = clone(found.object);
    obj.metadata.resourceVersion = String(++this.rv);
    this.record({ rv: this.rv, type: 'DELETED', resource, object: obj });
    return clone(obj);
  }

  get(resource: ResourceType, ns: string, name: string): KubeObject | undefined {
    const found = this.objects.get(ObjectStore.key(resource, ns, name));
    return found && clone(found.object);
  }

  list(resource?: ResourceType, namespace?: string): KubeObject[] {
    const out: KubeObject[] = [];
    for (const { resource: r, object } of this.objects.values()) {
      if (resource && r !== resource) continue;
      if (namespace && object.metadata.namespace !== namespace) continue;
      out.push(clone(object));
    }
    return out.sort((a, b) => Number(a.metadata.resourceVersion) - Number(b.metadata.resourceVersion));
  }

  /** Events after `rv` (exclusive), or 'expired' when the history no longer reaches back that far. */
  eventsAfter(rv: number): StoredEvent[] | 'expired' {
    if (rv < this.floor) return 'expired';
    return this.history.filter((e) => e.rv > rv);
  }

  /** Forgets all history up to the current revision: every older watch revision is now expired. */
  compact(): void {
    this.history = [];
    this.floor = this.rv;
  }

  subscribe(l: Listener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  private record(e: StoredEvent): void {
    this.history.push(e);
    while (this.history.length > this.historyLimit) this.floor = this.history.shift()!.rv;
    for (const l of [...this.listeners]) l(e);
  }
}

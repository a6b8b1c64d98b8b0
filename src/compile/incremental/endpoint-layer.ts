/**
 * The endpoint layer of the inputs (EndpointSlices, Endpoints, Pods), kept as the lookups the
 * service model is built through (model/build.ts `Indexes`), updated one object at a time.
 *
 * Each update says which services it may have touched, found through reverse indexes rather than
 * a pass over all services: a slice or Endpoints object names its service; a pod reaches the
 * services whose endpoints point at it by targetRef or by one of its IPs (the builder falls back
 * to the IP when the targetRef finds no pod). Over-approximating is fine: the caller recomputes
 * and compares.
 */
import { indexInputs, type ByNamespace, type Indexes } from '../../model/build.js';
import type { InputSet } from '../../model/inputs.js';
import type { EndpointSlice, Endpoints, ObjectRef, Pod } from '../../model/k8s.js';

/** `namespace/name` of a Service. */
export type ServiceKey = string;
export const serviceKey = (namespace: string, name: string): ServiceKey => `${namespace}/${name}`;

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const podOrder = (a: Pod, b: Pod): number => cmp(a.meta.namespace, b.meta.namespace) || cmp(a.meta.name, b.meta.name);

/** key → service → how many references (several endpoints may name the same IP or pod). */
class RefIndex {
  private readonly refs = new Map<string, Map<ServiceKey, number>>();

  add(key: string, service: ServiceKey, delta: number): void {
    let m = this.refs.get(key);
    if (!m) this.refs.set(key, (m = new Map()));
    const n = (m.get(service) ?? 0) + delta;
    if (n > 0) m.set(service, n);
    else {
      m.delete(service);
      if (m.size === 0) this.refs.delete(key);
    }
  }

  collect(key: string, into: Set<ServiceKey>): void {
    for (const s of this.refs.get(key)?.keys() ?? []) into.add(s);
  }
}

const podRefKey = (ref: ObjectRef | undefined, namespace: string): string | undefined =>
  ref && (ref.kind === 'Pod' || ref.kind === '') ? `${ref.namespace ?? namespace}/${ref.name}` : undefined;

export class EndpointLayer {
  /** The lookups handed to `serviceEndpoints`; this class keeps them as `buildServiceModel` would build them. */
  readonly idx: Indexes;
  private readonly slices = new Map<string, EndpointSlice>();
  private readonly podsByIp: Map<string, Pod>;
  /** IP → pods listing it, to re-decide the winner when one of them changes. */
  private readonly ipClaims = new Map<string, Set<Pod>>();
  private readonly byIp = new RefIndex();
  private readonly byPod = new RefIndex();

  constructor(inputs: InputSet) {
    this.idx = indexInputs(inputs);
    this.podsByIp = this.idx.podsByIp as Map<string, Pod>;
    for (const s of inputs.endpointSlices) {
      this.slices.set(serviceKey(s.meta.namespace, s.meta.name), s);
      this.countSlice(s, 1);
    }
    for (const e of inputs.endpoints) this.countEndpoints(e, 1);
    for (const p of inputs.pods) this.claim(p, 1);
  }

  pod(namespace: string, name: string): Pod | undefined {
    return this.idx.podsByName.get(namespace)?.get(name);
  }

  /** Replaces (or, with `next` undefined, deletes) the slice `namespace/name`; returns the services it may touch. */
  replaceSlice(namespace: string, name: string, next: EndpointSlice | undefined): Set<ServiceKey> {
    const key = serviceKey(namespace, name);
    const prev = this.slices.get(key);
    const touched = new Set<ServiceKey>();
    for (const s of [prev, next])
      if (s && s.serviceName !== '') touched.add(serviceKey(s.meta.namespace, s.serviceName));
    if (prev) {
      this.countSlice(prev, -1);
      this.unlistSlice(prev);
      this.slices.delete(key);
    }
    if (next) {
      this.countSlice(next, 1);
      this.listSlice(next);
      this.slices.set(key, next);
    }
    return touched;
  }

  replaceEndpoints(namespace: string, name: string, next: Endpoints | undefined): Set<ServiceKey> {
    const byName = this.idx.endpointsByName;
    const prev = byName.get(namespace)?.get(name);
    if (prev) {
      this.countEndpoints(prev, -1);
      removeFrom(byName, namespace, name);
    }
    if (next) {
      this.countEndpoints(next, 1);
      putIn(byName, namespace, name, next);
    }
    return new Set([serviceKey(namespace, name)]);
  }

  /** Deletes the pod `namespace/name`; returns the services it may touch. */
  removePod(namespace: string, name: string): Set<ServiceKey> {
    const prev = this.pod(namespace, name);
    const touched = new Set<ServiceKey>();
    if (!prev) return touched;
    this.byPod.collect(`${namespace}/${name}`, touched);
    for (const ip of prev.ips) this.byIp.collect(ip, touched);
    this.claim(prev, -1);
    removeFrom(this.idx.podsByName, namespace, name);
    for (const ip of prev.ips) this.decideIp(ip);
    return touched;
  }

  /**
   * Puts a pod (new or replacing one of the same name); returns the services it may touch. A pod
   * that changes its namespace's workload shapes changes proxy classes: the incremental compiler
   * compiles those rounds in full.
   */
  replacePod(next: Pod): Set<ServiceKey> {
    const { namespace, name } = next.meta;
    const prev = this.pod(namespace, name);
    const touched = new Set<ServiceKey>();
    this.byPod.collect(`${namespace}/${name}`, touched);
    const ips = new Set([...(prev?.ips ?? []), ...next.ips]);
    for (const ip of ips) this.byIp.collect(ip, touched);
    if (prev) this.claim(prev, -1);
    putIn(this.idx.podsByName, namespace, name, next);
    this.claim(next, 1);
    for (const ip of ips) this.decideIp(ip);
    return touched;
  }

  private claim(pod: Pod, delta: 1 | -1): void {
    for (const ip of pod.ips) {
      let set = this.ipClaims.get(ip);
      if (!set) this.ipClaims.set(ip, (set = new Set()));
      if (delta > 0) set.add(pod);
      else {
        set.delete(pod);
        if (set.size === 0) this.ipClaims.delete(ip);
      }
    }
  }

  /** As the builder: of the pods claiming an IP (host network), the first by namespace/name wins. */
  private decideIp(ip: string): void {
    let winner: Pod | undefined;
    for (const p of this.ipClaims.get(ip) ?? []) if (!winner || podOrder(p, winner) < 0) winner = p;
    if (winner) this.podsByIp.set(ip, winner);
    else this.podsByIp.delete(ip);
  }

  private countSlice(s: EndpointSlice, delta: number): void {
    if (s.serviceName === '') return;
    const service = serviceKey(s.meta.namespace, s.serviceName);
    for (const e of s.endpoints) {
      for (const a of e.addresses) this.byIp.add(a, service, delta);
      const ref = podRefKey(e.targetRef, s.meta.namespace);
      if (ref !== undefined) this.byPod.add(ref, service, delta);
    }
  }

  private countEndpoints(e: Endpoints, delta: number): void {
    const service = serviceKey(e.meta.namespace, e.meta.name);
    for (const subset of e.subsets) {
      for (const a of [...subset.addresses, ...subset.notReadyAddresses]) {
        this.byIp.add(a.ip, service, delta);
        const ref = podRefKey(a.targetRef, e.meta.namespace);
        if (ref !== undefined) this.byPod.add(ref, service, delta);
      }
    }
  }

  /** The builder lists a service's slices in name order and has no entry for a service without slices. */
  private listSlice(s: EndpointSlice): void {
    if (s.serviceName === '') return;
    const list = this.idx.slicesByService.get(s.meta.namespace)?.get(s.serviceName);
    if (!list) return putIn(this.idx.slicesByService, s.meta.namespace, s.serviceName, [s]);
    let i = list.length;
    while (i > 0 && cmp((list[i - 1] as EndpointSlice).meta.name, s.meta.name) > 0) i--;
    list.splice(i, 0, s);
  }

  private unlistSlice(s: EndpointSlice): void {
    if (s.serviceName === '') return;
    const list = this.idx.slicesByService.get(s.meta.namespace)?.get(s.serviceName);
    const i = list?.indexOf(s) ?? -1;
    if (!list || i < 0) return;
    list.splice(i, 1);
    if (list.length === 0) removeFrom(this.idx.slicesByService, s.meta.namespace, s.serviceName);
  }
}

function putIn<T>(m: ByNamespace<T>, ns: string, name: string, v: T): void {
  let inner = m.get(ns);
  if (!inner) m.set(ns, (inner = new Map()));
  inner.set(name, v);
}

function removeFrom<T>(m: ByNamespace<T>, ns: string, name: string): void {
  const inner = m.get(ns);
  if (!inner) return;
  inner.delete(name);
  if (inner.size === 0) m.delete(ns);
}

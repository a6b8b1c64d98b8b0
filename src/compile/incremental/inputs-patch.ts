/**
 * Cheap edits of an InputSet, for the watcher: one informer event replaces or deletes one object.
 *
 * An InputSet is read as arrays, but rebuilding an array of 30k pods per event would cost more
 * than the incremental compile it feeds. So the objects live in persistent maps, namespace →
 * name → object: an edit copies the namespace index and the one namespace it touches, and every
 * earlier InputSet stays valid and unchanged (they are stored with snapshots). The arrays are
 * materialized lazily, on first read, sorted by namespace/name (the compiler is insensitive to
 * input order); a namespace's sorted slice is cached, so re-reading after one edit re-sorts one
 * namespace only.
 */
import type { AuthorizationPolicy } from '../../model/authorization-policy.js';
import type { Diagnostic } from '../../model/diagnostics.js';
import type { Gateway } from '../../model/gateway.js';
import type {
  GatewayClass,
  GRPCRoute,
  HTTPRoute,
  KubernetesGateway,
  ReferenceGrant,
  TCPRoute,
  TLSRoute,
} from '../../model/gateway-api.js';
import type { EnvoyFilter } from '../../model/envoy-filter.js';
import type { DestinationRule, VirtualService } from '../../model/istio.js';
import type { InputSet } from '../../model/inputs.js';
import type { EndpointSlice, Endpoints, Namespace, Node, Pod, Service } from '../../model/k8s.js';
import type { MeshConfig } from '../../model/mesh-config.js';
import type { PeerAuthentication } from '../../model/peer-authentication.js';
import type { RequestAuthentication } from '../../model/request-authentication.js';
import type { ServiceEntry, WorkloadEntry, WorkloadGroup } from '../../model/service-entry.js';
import type { Ingress, IngressClass } from '../../model/ingress.js';
import type { Sidecar } from '../../model/sidecar.js';
import type { Telemetry } from '../../model/telemetry.js';

export interface InputObjects {
  Service: Service;
  EndpointSlice: EndpointSlice;
  Endpoints: Endpoints;
  Pod: Pod;
  Namespace: Namespace;
  Node: Node;
  VirtualService: VirtualService;
  DestinationRule: DestinationRule;
  Gateway: Gateway;
  AuthorizationPolicy: AuthorizationPolicy;
  PeerAuthentication: PeerAuthentication;
  RequestAuthentication: RequestAuthentication;
  ServiceEntry: ServiceEntry;
  WorkloadEntry: WorkloadEntry;
  WorkloadGroup: WorkloadGroup;
  GatewayClass: GatewayClass;
  /** The Gateway API's Gateway (the Istio one is `Gateway`). */
  KubernetesGateway: KubernetesGateway;
  HTTPRoute: HTTPRoute;
  GRPCRoute: GRPCRoute;
  TCPRoute: TCPRoute;
  TLSRoute: TLSRoute;
  ReferenceGrant: ReferenceGrant;
  Sidecar: Sidecar;
  Telemetry: Telemetry;
  EnvoyFilter: EnvoyFilter;
  Ingress: Ingress;
  IngressClass: IngressClass;
}
export type InputKind = keyof InputObjects;
export type InputObject = InputObjects[InputKind];

type ListKey =
  | 'services'
  | 'endpointSlices'
  | 'endpoints'
  | 'pods'
  | 'namespaces'
  | 'nodes'
  | 'virtualServices'
  | 'destinationRules'
  | 'gateways'
  | 'authorizationPolicies'
  | 'peerAuthentications'
  | 'requestAuthentications'
  | 'serviceEntries'
  | 'workloadEntries'
  | 'workloadGroups'
  | 'gatewayClasses'
  | 'kubernetesGateways'
  | 'httpRoutes'
  | 'grpcRoutes'
  | 'tcpRoutes'
  | 'tlsRoutes'
  | 'referenceGrants'
  | 'sidecars'
  | 'telemetries'
  | 'envoyFilters'
  | 'ingresses'
  | 'ingressClasses';

export const LIST_OF_KIND: Readonly<Record<InputKind, ListKey>> = {
  Service: 'services',
  EndpointSlice: 'endpointSlices',
  Endpoints: 'endpoints',
  Pod: 'pods',
  Namespace: 'namespaces',
  Node: 'nodes',
  VirtualService: 'virtualServices',
  DestinationRule: 'destinationRules',
  Gateway: 'gateways',
  AuthorizationPolicy: 'authorizationPolicies',
  PeerAuthentication: 'peerAuthentications',
  RequestAuthentication: 'requestAuthentications',
  ServiceEntry: 'serviceEntries',
  WorkloadEntry: 'workloadEntries',
  WorkloadGroup: 'workloadGroups',
  GatewayClass: 'gatewayClasses',
  KubernetesGateway: 'kubernetesGateways',
  HTTPRoute: 'httpRoutes',
  GRPCRoute: 'grpcRoutes',
  TCPRoute: 'tcpRoutes',
  TLSRoute: 'tlsRoutes',
  ReferenceGrant: 'referenceGrants',
  Sidecar: 'sidecars',
  Telemetry: 'telemetries',
  EnvoyFilter: 'envoyFilters',
  Ingress: 'ingresses',
  IngressClass: 'ingressClasses',
};
const KINDS = Object.keys(LIST_OF_KIND) as InputKind[];

export const isInputKind = (kind: string): kind is InputKind => Object.hasOwn(LIST_OF_KIND, kind);

interface Named {
  readonly meta: { readonly namespace: string; readonly name: string };
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** A namespace's objects by name. Never mutated once published in a KindStore. */
type Bucket = ReadonlyMap<string, Named>;

/** Sorted contents of a bucket, computed once per bucket object. */
const sortedBuckets = new WeakMap<Bucket, readonly Named[]>();

function sortedBucket(bucket: Bucket): readonly Named[] {
  let sorted = sortedBuckets.get(bucket);
  if (!sorted) {
    sorted = [...bucket.keys()].sort(cmp).map((name) => bucket.get(name) as Named);
    sortedBuckets.set(bucket, sorted);
  }
  return sorted;
}

/** All objects of one kind: an immutable value; `with` / `without` return a new store sharing the untouched namespaces. */
class KindStore {
  private array: readonly Named[] | undefined;

  constructor(private readonly byNamespace: ReadonlyMap<string, Bucket>) {}

  static of(items: readonly Named[]): KindStore {
    const m = new Map<string, Map<string, Named>>();
    for (const item of items) {
      let bucket = m.get(item.meta.namespace);
      if (!bucket) m.set(item.meta.namespace, (bucket = new Map()));
      bucket.set(item.meta.name, item);
    }
    return new KindStore(m);
  }

  get(namespace: string, name: string): Named | undefined {
    return this.byNamespace.get(namespace)?.get(name);
  }

  with(item: Named): KindStore {
    const { namespace, name } = item.meta;
    const bucket = new Map(this.byNamespace.get(namespace));
    bucket.set(name, item);
    return new KindStore(new Map(this.byNamespace).set(namespace, bucket));
  }

  without(namespace: string, name: string): KindStore {
    const old = this.byNamespace.get(namespace);
    if (!old?.has(name)) return this;
    const outer = new Map(this.byNamespace);
    if (old.size === 1) outer.delete(namespace);
    else {
      const bucket = new Map(old);
      bucket.delete(name);
      outer.set(namespace, bucket);
    }
    return new KindStore(outer);
  }

  toArray(): readonly Named[] {
    if (!this.array) {
      const out: Named[] = [];
      for (const ns of [...this.byNamespace.keys()].sort(cmp))
        for (const item of sortedBucket(this.byNamespace.get(ns) as Bucket)) out.push(item);
      this.array = Object.freeze(out);
    }
    return this.array;
  }
}

type Stores = Readonly<Record<InputKind, KindStore>>;

interface Indexed {
  readonly stores: Stores;
  readonly meshConfig: MeshConfig;
  readonly diagnostics: readonly Diagnostic[];
}

/** The stores behind an InputSet made here; plain InputSets are indexed on first edit. */
const indexedSets = new WeakMap<InputSet, Indexed>();

function make(state: Indexed): InputSet {
  const set = { meshConfig: state.meshConfig, diagnostics: state.diagnostics } as Record<string, unknown>;
  for (const kind of KINDS) {
    // Own enumerable getters: `{ ...inputs }` and JSON.stringify still see every list.
    Object.defineProperty(set, LIST_OF_KIND[kind], { enumerable: true, get: () => state.stores[kind].toArray() });
  }
  const inputs = Object.freeze(set) as unknown as InputSet;
  indexedSets.set(inputs, state);
  return inputs;
}

function indexed(inputs: InputSet): Indexed {
  const known = indexedSets.get(inputs);
  if (known) return known;
  const stores = {} as Record<InputKind, KindStore>;
  for (const kind of KINDS) stores[kind] = KindStore.of(inputs[LIST_OF_KIND[kind]]);
  return { stores, meshConfig: inputs.meshConfig, diagnostics: inputs.diagnostics };
}

/** The same inputs, backed by maps: later edits are cheap. O(n) once for a plain InputSet. */
export function indexedInputs(inputs: InputSet): InputSet {
  return indexedSets.has(inputs) ? inputs : make(indexed(inputs));
}

/** `inputs` with `object` added, or replacing the object of the same kind, namespace and name. */
export function withReplaced<K extends InputKind>(inputs: InputSet, kind: K, object: InputObjects[K]): InputSet {
  if (object.kind !== kind) throw new TypeError(`withReplaced: a ${object.kind} given as ${kind}`);
  const state = indexed(inputs);
  return make({ ...state, stores: { ...state.stores, [kind]: state.stores[kind].with(object) } });
}

/** `inputs` without the object of that kind, namespace ("" for cluster-scoped kinds) and name. */
export function withDeleted(inputs: InputSet, kind: InputKind, namespace: string, name: string): InputSet {
  const state = indexed(inputs);
  const store = state.stores[kind].without(namespace, name);
  return store === state.stores[kind] && indexedSets.has(inputs)
    ? inputs
    : make({ ...state, stores: { ...state.stores, [kind]: store } });
}

export function withMeshConfig(inputs: InputSet, meshConfig: MeshConfig): InputSet {
  return make({ ...indexed(inputs), meshConfig });
}

/** `inputs` with other parse/validation diagnostics (the watcher's view of invalid objects). */
export function withInputDiagnostics(inputs: InputSet, diagnostics: readonly Diagnostic[]): InputSet {
  return make({ ...indexed(inputs), diagnostics });
}

/** The object of that kind, namespace and name: O(1) on sets made here, a scan otherwise. */
export function lookupInput<K extends InputKind>(
  inputs: InputSet,
  kind: K,
  namespace: string,
  name: string,
): InputObjects[K] | undefined {
  const state = indexedSets.get(inputs);
  if (state) return state.stores[kind].get(namespace, name) as InputObjects[K] | undefined;
  const list = inputs[LIST_OF_KIND[kind]] as readonly Named[];
  return list.find((o) => o.meta.namespace === namespace && o.meta.name === name) as InputObjects[K] | undefined;
}

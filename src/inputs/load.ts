/**
 * Raw documents → validated InputSet. Dispatches on apiVersion + kind, drops invalid objects
 * (their diagnostics explain why), resolves duplicates, and sorts everything so the result does not
 * depend on the order documents were given in. Pure.
 */
import { canonicalJson } from '../canonical-json.js';
import { sortDiagnostics, type Diagnostic, type Origin } from '../model/diagnostics.js';
import type { Gateway } from '../model/gateway.js';
import type {
  GatewayClass,
  GRPCRoute,
  HTTPRoute,
  KubernetesGateway,
  ReferenceGrant,
  TCPRoute,
  TLSRoute,
} from '../model/gateway-api.js';
import type { AuthorizationPolicy } from '../model/authorization-policy.js';
import type { EnvoyFilter } from '../model/envoy-filter.js';
import type { DestinationRule, VirtualService } from '../model/istio.js';
import type { Ingress, IngressClass } from '../model/ingress.js';
import type { InputSet } from '../model/inputs.js';
import type { EndpointSlice, Endpoints, Namespace, Node, ObjectMeta, Pod, Service } from '../model/k8s.js';
import { DEFAULT_MESH_CONFIG, type MeshConfig } from '../model/mesh-config.js';
import type { PeerAuthentication } from '../model/peer-authentication.js';
import type { RequestAuthentication } from '../model/request-authentication.js';
import type { ServiceEntry, WorkloadEntry, WorkloadGroup } from '../model/service-entry.js';
import type { Sidecar } from '../model/sidecar.js';
import type { Telemetry } from '../model/telemetry.js';
import type { RawDocument } from './parse.js';
import { readAuthorizationPolicy } from './validate/authorization-policy.js';
import { readDestinationRule } from './validate/destination-rule.js';
import { readEnvoyFilter } from './validate/envoy-filter.js';
import { readGateway } from './validate/gateway.js';
import { readIngress, readIngressClass } from './validate/ingress.js';
import { readGatewayClass, readKubernetesGateway } from './validate/gateway-api/gateway.js';
import { readReferenceGrant } from './validate/gateway-api/reference-grant.js';
import { readGRPCRoute, readHTTPRoute, readTCPRoute, readTLSRoute } from './validate/gateway-api/routes.js';
import { readEndpointSlice, readEndpoints, readNamespace, readNode, readPod, readService } from './validate/k8s.js';
import { isIstioMeshConfigMap, readMeshConfigMap, readMeshConfigObject } from './validate/mesh-config.js';
import { readPeerAuthentication } from './validate/peer-authentication.js';
import { get, Reader, type Raw } from './validate/reader.js';
import { readRequestAuthentication } from './validate/request-authentication.js';
import { readServiceEntry } from './validate/service-entry.js';
import { readSidecar } from './validate/sidecar.js';
import { readTelemetry } from './validate/telemetry.js';
import { readVirtualService } from './validate/virtual-service.js';
import { readWorkloadEntry, readWorkloadGroup } from './validate/workload-entry.js';
import { redactedRejection } from './rejected.js';

const ISTIO_NETWORKING = ['networking.istio.io/v1', 'networking.istio.io/v1beta1', 'networking.istio.io/v1alpha3'];
const ISTIO_SECURITY = ['security.istio.io/v1', 'security.istio.io/v1beta1'];
const GATEWAY_API = ['gateway.networking.k8s.io/v1', 'gateway.networking.k8s.io/v1beta1'];
/** TCPRoute and TLSRoute: v1alpha2, and v1 since the Gateway API promoted them. */
const GATEWAY_API_L4 = ['gateway.networking.k8s.io/v1alpha2', 'gateway.networking.k8s.io/v1'];

/** Istio kinds meshsnap knows but does not compile yet: one warning each, then skipped. */
const UNSUPPORTED_ISTIO_KINDS = new Set(['WasmPlugin']);
/**
 * Istio kinds with nothing to compile: a ProxyConfig's fields (concurrency, environmentVariables,
 * image) are read by the sidecar injector and istio-agent, never turned into xDS by istiod.
 */
const NOT_XDS_ISTIO_KINDS: Readonly<Record<string, string>> = {
  ProxyConfig:
    'its fields (concurrency, environmentVariables, image) are read by the sidecar injector and istio-agent, not turned into xDS',
};
const TELEMETRY = ['telemetry.istio.io/v1', 'telemetry.istio.io/v1alpha1'];

interface Candidate<T> {
  readonly value: T;
  readonly doc: RawDocument;
}

interface Buckets {
  services: Candidate<Service>[];
  endpointSlices: Candidate<EndpointSlice>[];
  endpoints: Candidate<Endpoints>[];
  pods: Candidate<Pod>[];
  namespaces: Candidate<Namespace>[];
  nodes: Candidate<Node>[];
  virtualServices: Candidate<VirtualService>[];
  destinationRules: Candidate<DestinationRule>[];
  gateways: Candidate<Gateway>[];
  authorizationPolicies: Candidate<AuthorizationPolicy>[];
  peerAuthentications: Candidate<PeerAuthentication>[];
  requestAuthentications: Candidate<RequestAuthentication>[];
  serviceEntries: Candidate<ServiceEntry>[];
  workloadEntries: Candidate<WorkloadEntry>[];
  workloadGroups: Candidate<WorkloadGroup>[];
  gatewayClasses: Candidate<GatewayClass>[];
  kubernetesGateways: Candidate<KubernetesGateway>[];
  httpRoutes: Candidate<HTTPRoute>[];
  grpcRoutes: Candidate<GRPCRoute>[];
  tcpRoutes: Candidate<TCPRoute>[];
  tlsRoutes: Candidate<TLSRoute>[];
  referenceGrants: Candidate<ReferenceGrant>[];
  sidecars: Candidate<Sidecar>[];
  telemetries: Candidate<Telemetry>[];
  envoyFilters: Candidate<EnvoyFilter>[];
  ingresses: Candidate<Ingress>[];
  ingressClasses: Candidate<IngressClass>[];
  meshConfigs: Candidate<MeshConfig>[];
}

/** Reads one object into its bucket; true when it was read (valid and of a compiled kind). */
type Handler = (r: Reader, raw: Raw, origin: Origin, apiVersion: string, out: Buckets, doc: RawDocument) => boolean;

const k8s =
  <T>(read: (r: Reader, raw: Raw, origin: Origin) => T | undefined, bucket: (b: Buckets) => Candidate<T>[]): Handler =>
  (r, raw, origin, _v, out, doc) => {
    const value = read(r, raw, origin);
    if (value === undefined) return false;
    bucket(out).push({ value, doc });
    return true;
  };

/** A reader that depends on the apiVersion (Istio and Gateway API kinds). */
const versioned =
  <T>(
    read: (r: Reader, raw: Raw, origin: Origin, apiVersion: string) => T | undefined,
    bucket: (b: Buckets) => Candidate<T>[],
  ): Handler =>
  (r, raw, origin, v, out, doc) => {
    const value = read(r, raw, origin, v);
    if (value === undefined) return false;
    bucket(out).push({ value, doc });
    return true;
  };

const KNOWN: Readonly<Record<string, { readonly apiVersions: readonly string[]; readonly handle: Handler }>> = {
  Service: { apiVersions: ['v1'], handle: k8s(readService, (b) => b.services) },
  Endpoints: { apiVersions: ['v1'], handle: k8s(readEndpoints, (b) => b.endpoints) },
  EndpointSlice: { apiVersions: ['discovery.k8s.io/v1'], handle: k8s(readEndpointSlice, (b) => b.endpointSlices) },
  Pod: { apiVersions: ['v1'], handle: k8s(readPod, (b) => b.pods) },
  Namespace: { apiVersions: ['v1'], handle: k8s(readNamespace, (b) => b.namespaces) },
  Node: { apiVersions: ['v1'], handle: k8s(readNode, (b) => b.nodes) },
  VirtualService: {
    apiVersions: ISTIO_NETWORKING,
    handle: versioned(readVirtualService, (b) => b.virtualServices),
  },
  DestinationRule: {
    apiVersions: ISTIO_NETWORKING,
    handle: versioned(readDestinationRule, (b) => b.destinationRules),
  },
  Gateway: {
    apiVersions: [...ISTIO_NETWORKING, ...GATEWAY_API],
    handle: (r, raw, origin, v, out, doc) => {
      if (GATEWAY_API.includes(v)) {
        const value = readKubernetesGateway(r, raw, origin, v);
        if (value) out.kubernetesGateways.push({ value, doc });
        return value !== undefined;
      }
      const value = readGateway(r, raw, origin, v);
      if (value) out.gateways.push({ value, doc });
      return value !== undefined;
    },
  },
  GatewayClass: { apiVersions: GATEWAY_API, handle: versioned(readGatewayClass, (b) => b.gatewayClasses) },
  HTTPRoute: { apiVersions: GATEWAY_API, handle: versioned(readHTTPRoute, (b) => b.httpRoutes) },
  GRPCRoute: { apiVersions: GATEWAY_API, handle: versioned(readGRPCRoute, (b) => b.grpcRoutes) },
  TCPRoute: { apiVersions: GATEWAY_API_L4, handle: versioned(readTCPRoute, (b) => b.tcpRoutes) },
  TLSRoute: { apiVersions: GATEWAY_API_L4, handle: versioned(readTLSRoute, (b) => b.tlsRoutes) },
  ReferenceGrant: { apiVersions: GATEWAY_API, handle: versioned(readReferenceGrant, (b) => b.referenceGrants) },
  Sidecar: {
    apiVersions: ISTIO_NETWORKING,
    handle: versioned(readSidecar, (b) => b.sidecars),
  },
  Telemetry: { apiVersions: TELEMETRY, handle: versioned(readTelemetry, (b) => b.telemetries) },
  EnvoyFilter: {
    apiVersions: ['networking.istio.io/v1alpha3'],
    handle: versioned(readEnvoyFilter, (b) => b.envoyFilters),
  },
  AuthorizationPolicy: {
    apiVersions: ISTIO_SECURITY,
    handle: versioned(readAuthorizationPolicy, (b) => b.authorizationPolicies),
  },
  PeerAuthentication: {
    apiVersions: ISTIO_SECURITY,
    handle: versioned(readPeerAuthentication, (b) => b.peerAuthentications),
  },
  RequestAuthentication: {
    apiVersions: ISTIO_SECURITY,
    handle: versioned(readRequestAuthentication, (b) => b.requestAuthentications),
  },
  ServiceEntry: {
    apiVersions: ISTIO_NETWORKING,
    handle: versioned(readServiceEntry, (b) => b.serviceEntries),
  },
  WorkloadEntry: {
    apiVersions: ISTIO_NETWORKING,
    handle: versioned(readWorkloadEntry, (b) => b.workloadEntries),
  },
  WorkloadGroup: {
    apiVersions: ISTIO_NETWORKING,
    handle: versioned(readWorkloadGroup, (b) => b.workloadGroups),
  },
  Ingress: { apiVersions: ['networking.k8s.io/v1'], handle: versioned(readIngress, (b) => b.ingresses) },
  IngressClass: { apiVersions: ['networking.k8s.io/v1'], handle: versioned(readIngressClass, (b) => b.ingressClasses) },
  MeshConfig: {
    apiVersions: ['meshsnap.dev/v1alpha1'],
    handle: (r, raw, _o, _v, out, doc) => {
      const value = readMeshConfigObject(r, raw);
      if (value) out.meshConfigs.push({ value, doc });
      return value !== undefined;
    },
  },
};

const NO_DIAGNOSTICS: readonly Diagnostic[] = Object.freeze([]);

/**
 * Watches the one validation pass over each document (src/inputs/retain.ts records what it
 * reads, to store only that): `observe` is given each document and the function that reads it,
 * with the object the validator should read instead of the document's own, and what reading it gave
 * (to call during `observe` only).
 */
export interface ReadObserver {
  observe(doc: RawDocument, read: (view: Raw) => DocumentReading): void;
}

/** Where a read object goes in the InputSet. */
export type InputBucket = keyof Buckets;

/**
 * What reading one valid object without any diagnostic gave (readOneDocument): the InputSet takes
 * it as it is, so an object read once on arrival (the watcher) is not read again.
 */
export interface ObjectRead {
  readonly bucket: InputBucket;
  readonly value: object;
}

/** A document, with what reading it gave when it was read already (then it is not read again). */
export interface ReadDocument extends RawDocument {
  readonly read?: ObjectRead | undefined;
}

export function buildInputSet(docs: readonly ReadDocument[], observer?: ReadObserver): InputSet {
  const diagnostics: Diagnostic[] = [];
  const out = emptyBuckets();
  const unread = takeRead(docs, out);
  if (observer) {
    // One reading function for every document (an observer reads its document during `observe`).
    let current: RawDocument | undefined;
    const read = (view: Raw): DocumentReading => {
      const before = diagnostics.length;
      const used = readDocument(current as RawDocument, out, diagnostics, view);
      return { diagnostics: diagnostics.length === before ? NO_DIAGNOSTICS : diagnostics.slice(before), used };
    };
    for (const doc of unread) {
      current = doc;
      observer.observe(doc, read);
    }
  } else for (const doc of unread) readDocument(doc, out, diagnostics);

  const meshConfigs = dedupe(
    out.meshConfigs,
    () => 'mesh',
    diagnostics,
    (c) => ({
      code: 'duplicate-mesh-config',
      message: `more than one mesh config; using the one from ${where(c)}`,
    }),
  );
  return {
    meshConfig: meshConfigs[0] ?? DEFAULT_MESH_CONFIG,
    services: unique(out.services, diagnostics),
    endpointSlices: unique(out.endpointSlices, diagnostics),
    endpoints: unique(out.endpoints, diagnostics),
    pods: unique(out.pods, diagnostics),
    namespaces: unique(out.namespaces, diagnostics),
    nodes: unique(out.nodes, diagnostics),
    virtualServices: unique(out.virtualServices, diagnostics),
    destinationRules: unique(out.destinationRules, diagnostics),
    gateways: unique(out.gateways, diagnostics),
    authorizationPolicies: unique(out.authorizationPolicies, diagnostics),
    peerAuthentications: unique(out.peerAuthentications, diagnostics),
    requestAuthentications: unique(out.requestAuthentications, diagnostics),
    serviceEntries: unique(out.serviceEntries, diagnostics),
    workloadEntries: unique(out.workloadEntries, diagnostics),
    workloadGroups: unique(out.workloadGroups, diagnostics),
    gatewayClasses: unique(out.gatewayClasses, diagnostics),
    kubernetesGateways: unique(out.kubernetesGateways, diagnostics),
    httpRoutes: unique(out.httpRoutes, diagnostics),
    grpcRoutes: unique(out.grpcRoutes, diagnostics),
    tcpRoutes: unique(out.tcpRoutes, diagnostics),
    tlsRoutes: unique(out.tlsRoutes, diagnostics),
    referenceGrants: unique(out.referenceGrants, diagnostics),
    sidecars: unique(out.sidecars, diagnostics),
    telemetries: unique(out.telemetries, diagnostics),
    envoyFilters: unique(out.envoyFilters, diagnostics),
    ingresses: unique(out.ingresses, diagnostics),
    ingressClasses: unique(out.ingressClasses, diagnostics),
    diagnostics: sortDiagnostics(diagnostics),
  };
}

/** Puts the already-read documents' values into their buckets; the documents left to read. */
function takeRead(docs: readonly ReadDocument[], out: Buckets): readonly ReadDocument[] {
  const unread: ReadDocument[] = [];
  for (const doc of docs) {
    const read = doc.read;
    if (read) (out[read.bucket] as Candidate<object>[]).push({ value: read.value, doc });
    else unread.push(doc);
  }
  return unread.length === docs.length ? docs : unread;
}

/** What reading one document gives: its diagnostics, and whether it is an object the compiler uses. */
export interface DocumentReading {
  readonly diagnostics: readonly Diagnostic[];
  /** True when it was read into the InputSet (a compiled kind that passed validation). */
  readonly used: boolean;
  /** The value read, when it was used without any diagnostic (readOneDocument only). */
  readonly read?: ObjectRead;
}

/** Reads one document alone, as buildInputSet reads each (src/inputs/retain.ts decides what to store from it). */
export function readOneDocument(doc: RawDocument): DocumentReading {
  const diagnostics: Diagnostic[] = [];
  // One set of buckets for every single reading (the watcher reads each object on arrival), emptied after.
  const out = scratchInUse ? emptyBuckets() : ((scratchInUse = true), scratch);
  let taken: ObjectRead | undefined;
  try {
    const used = readDocument(doc, out, diagnostics);
    taken = used ? takeOne(out) : undefined;
    const read = diagnostics.length === 0 ? taken : undefined;
    return read ? { diagnostics, used, read } : { diagnostics, used };
  } finally {
    if (out === scratch) {
      if (!taken) for (const bucket of BUCKETS) scratch[bucket].length = 0;
      scratchInUse = false;
    }
  }
}

/** The one value a single document's reading put in `out`, taken out of it. */
function takeOne(out: Buckets): ObjectRead | undefined {
  for (const bucket of BUCKETS) {
    const candidates = out[bucket] as Candidate<object>[];
    const first = candidates.pop();
    if (first) return { bucket, value: first.value };
  }
  return undefined;
}

const emptyBuckets = (): Buckets => ({
  services: [],
  endpointSlices: [],
  endpoints: [],
  pods: [],
  namespaces: [],
  nodes: [],
  virtualServices: [],
  destinationRules: [],
  gateways: [],
  authorizationPolicies: [],
  peerAuthentications: [],
  requestAuthentications: [],
  serviceEntries: [],
  workloadEntries: [],
  workloadGroups: [],
  gatewayClasses: [],
  kubernetesGateways: [],
  httpRoutes: [],
  grpcRoutes: [],
  tcpRoutes: [],
  tlsRoutes: [],
  referenceGrants: [],
  sidecars: [],
  telemetries: [],
  envoyFilters: [],
  ingresses: [],
  ingressClasses: [],
  meshConfigs: [],
});

const scratch = emptyBuckets();
let scratchInUse = false;
const BUCKETS = Object.keys(scratch) as readonly InputBucket[];

/** `raw` is the object read: the document's own, or an observer's view of it. True when it was read into `out`. */
function readDocument(doc: RawDocument, out: Buckets, diagnostics: Diagnostic[], raw: Raw = doc.object): boolean {
  const origin: Origin = { file: doc.file, index: doc.index };
  const kind = get(raw, 'kind');
  const apiVersion = get(raw, 'apiVersion');
  const r = new Reader(
    { file: doc.file, index: doc.index, ...(typeof kind === 'string' && kind !== '' ? { kind } : {}) },
    diagnostics,
  );
  if (typeof kind !== 'string' || kind === '') {
    r.error('kind', 'every object needs a kind', 'invalid-document');
    return false;
  }
  if (typeof apiVersion !== 'string' || apiVersion === '') {
    r.error('apiVersion', 'every object needs an apiVersion', 'invalid-document');
    return false;
  }
  const rejection = redactedRejection(raw);
  if (rejection) {
    // A rejected object as stored (src/inputs/rejected.ts): its recorded error, nothing else to read.
    nameFromMeta(r, raw);
    r.error(rejection.field ?? '', rejection.message, rejection.code);
    return false;
  }
  const known = KNOWN[kind];
  if (known && Object.hasOwn(KNOWN, kind)) {
    if (!known.apiVersions.includes(apiVersion)) {
      nameFromMeta(r, raw);
      r.error(
        'apiVersion',
        `unknown apiVersion "${apiVersion.slice(0, 60)}" for ${kind}; expected ${known.apiVersions.join(' or ')}`,
        'unknown-api-version',
      );
      return false;
    }
    return known.handle(r, raw, origin, apiVersion, out, doc);
  }
  nameFromMeta(r, raw);
  if (UNSUPPORTED_ISTIO_KINDS.has(kind) && apiVersion.includes('istio.io/')) {
    r.warn('', `${kind} is not supported yet; skipped`, 'unsupported-kind');
    return false;
  }
  const notXds = Object.hasOwn(NOT_XDS_ISTIO_KINDS, kind) ? NOT_XDS_ISTIO_KINDS[kind] : undefined;
  if (notXds && apiVersion.includes('istio.io/')) {
    r.info('', `${kind}: ${notXds}; nothing for meshsnap to compile, skipped`, 'ignored-kind');
    return false;
  }
  if (kind === 'ConfigMap' && apiVersion === 'v1' && isIstioMeshConfigMap(raw)) {
    const value = readMeshConfigMap(r, raw);
    if (value) out.meshConfigs.push({ value, doc });
    return value !== undefined;
  }
  r.info('', `${kind} (${apiVersion.slice(0, 60)}) is not used by meshsnap; skipped`, 'ignored-kind');
  return false;
}

/** Best-effort namespace/name for diagnostics about objects that are not read further. */
function nameFromMeta(r: Reader, raw: Raw): void {
  const m = get(raw, 'metadata');
  if (m === null || typeof m !== 'object' || Array.isArray(m)) return;
  const name = get(m as Raw, 'name');
  const ns = get(m as Raw, 'namespace');
  r.id = {
    ...r.id,
    ...(typeof name === 'string' ? { name } : {}),
    ...(typeof ns === 'string' ? { namespace: ns } : {}),
  };
}

function where(c: { readonly doc: RawDocument }): string {
  return `${c.doc.file}#${c.doc.index}`;
}

/**
 * Keeps one object per key. The kept one is the first in canonical order — by content, then
 * origin — so the choice does not depend on the order documents were read in.
 */
function dedupe<T>(
  items: readonly Candidate<T>[],
  key: (c: Candidate<T>) => string,
  diagnostics: Diagnostic[],
  describe: (kept: Candidate<T>) => { code: string; message: string },
): T[] {
  const groups = new Map<string, Candidate<T>[]>();
  for (const c of items) {
    const k = key(c);
    const g = groups.get(k);
    if (g) g.push(c);
    else groups.set(k, [c]);
  }
  const kept: T[] = [];
  for (const group of groups.values()) kept.push(keptOf(group, diagnostics, describe));
  return kept;
}

/** The one kept of candidates with one key (the first in canonical order); an error for each other one. */
function keptOf<T>(
  group: readonly Candidate<T>[],
  diagnostics: Diagnostic[],
  describe: (kept: Candidate<T>) => { code: string; message: string },
): T {
  if (group.length === 1) return group[0]!.value;
  const keyed = group.map((c) => ({ c, content: canonicalJson(c.doc.object) }));
  keyed.sort((a, b) => cmp(a.content, b.content) || cmp(a.c.doc.file, b.c.doc.file) || a.c.doc.index - b.c.doc.index);
  const first = keyed[0]!.c;
  for (const { c: dup } of keyed.slice(1)) {
    const { code, message } = describe(first);
    const id = metaOf(dup.value);
    diagnostics.push({
      severity: 'error',
      code,
      message,
      ...(id ? { kind: id.kind, namespace: id.namespace, name: id.name } : {}),
      file: dup.doc.file,
      index: dup.doc.index,
    });
  }
  return first.value;
}

interface Named {
  readonly kind: string;
  readonly meta: ObjectMeta;
}

function metaOf(v: unknown): { kind: string; namespace: string; name: string } | undefined {
  if (v === null || typeof v !== 'object' || !('meta' in v) || !('kind' in v)) return undefined;
  const n = v as Named;
  return { kind: n.kind, namespace: n.meta.namespace, name: n.meta.name };
}

/**
 * Deduplicates by kind/namespace/name, then sorts by namespace/name: sorted first, so the
 * candidates of one key are neighbours (no key string or group per object).
 */
function unique<T extends Named>(items: readonly Candidate<T>[], diagnostics: Diagnostic[]): T[] {
  const byName = (a: Candidate<T>, b: Candidate<T>): number =>
    cmp(a.value.meta.namespace, b.value.meta.namespace) || cmp(a.value.meta.name, b.value.meta.name);
  const sorted = [...items].sort(byName);
  const describe = (c: Candidate<T>) => ({
    code: 'duplicate-object',
    message: `duplicate ${c.value.kind} ${c.value.meta.namespace ? `${c.value.meta.namespace}/` : ''}${c.value.meta.name}; keeping the one from ${where(c)}`,
  });
  const kept: T[] = [];
  for (let start = 0; start < sorted.length;) {
    let end = start + 1;
    while (end < sorted.length && byName(sorted[start]!, sorted[end]!) === 0) end++;
    kept.push(end === start + 1 ? sorted[start]!.value : keptOf(sorted.slice(start, end), diagnostics, describe));
    start = end;
  }
  return kept;
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

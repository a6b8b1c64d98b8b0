/**
 * What one resource refers to by name: the route configs a listener loads over RDS, the
 * ClusterLoadAssignments an EDS cluster needs, the clusters routes and TCP proxies send to.
 * Read from the typed message objects; filters packed in `Any` are decoded.
 */
import protobuf from 'protobufjs/minimal.js';
import {
  decodeMessage,
  envoy,
  packedMessageOf,
  type Any,
  type Cluster,
  type HttpConnectionManager,
  type Listener,
  type RouteConfiguration,
  type VirtualHost,
} from './proto.js';
import { TypeName, typeNameOf, type XdsType } from './type-urls.js';

export interface ResourceRefs {
  /** RDS route config names. */
  readonly routes: string[];
  /** EDS service names. */
  readonly endpoints: string[];
  readonly clusters: string[];
  /** Packed filter configs that could not be decoded (a compiler bug). */
  readonly undecodable: string[];
}

/**
 * A piece of a resource's references that resources holding the same sub-message share (see
 * `resourceRefParts`), with a slot where the check running now keeps what it derived from it: a
 * field read instead of a map lookup per part, for the million parts a 10k mesh's route configs
 * hold. `memoOf` is the token of the check that wrote `memo`, so no check reads another's.
 */
export interface RefPart extends ResourceRefs {
  memoOf: object | undefined;
  memo: unknown;
}

type TcpProxy = envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy.$Properties;

const EDS = envoy.config.cluster.v3.Cluster.DiscoveryType.EDS;

const emptyRefs = (clusters: string[] = []): RefPart => ({
  routes: [],
  endpoints: [],
  clusters,
  undecodable: [],
  memoOf: undefined,
  memo: undefined,
});
const NONE: ResourceRefs = { routes: [], endpoints: [], clusters: [], undecodable: [] };
const EMPTY_PART: RefPart = emptyRefs();
const NO_PARTS: readonly RefPart[] = [];

/**
 * Reads references, each message object once (messages are immutable once built). The shared
 * reader (the module functions below) remembers them as long as their messages live, for the
 * checks that follow (the watcher's builds and deltas hold the same objects again). A check of an
 * output that is checked once (the one-shot build) uses a reader of its own: its caches and the
 * parts' memos (the check's targets and holder sets) go with it at the end of the check instead of
 * living on beside the snapshot's build.
 */
export class ReferenceReader {
  private readonly refsCache = new WeakMap<object, ResourceRefs>();
  private readonly partsCache = new WeakMap<object, readonly RefPart[]>();
  /** A packed filter is often one object in many listeners (every virtualInbound's passthrough chains). */
  private readonly filterCache = new WeakMap<Any, RefPart>();
  /** A virtual host is usually one object in every client namespace's route config. */
  private readonly vhostCache = new WeakMap<VirtualHost, RefPart>();

  /**
   * `known`: a reader whose packed filters' references this one takes rather than decode them again
   * (read, never written: the parts it hands out are its own): a one-shot build's check reads the
   * EnvoyFilter copies the compile already read with the shared reader.
   */
  constructor(private readonly known?: ReferenceReader) {}

  /** All references of one resource (the concatenation of its parts). */
  resourceRefs(type: XdsType, message: object): ResourceRefs {
    if (type === 'endpoints') return NONE; // a ClusterLoadAssignment names nothing else
    if (type === 'clusters') return clusterPart(message as Cluster);
    const hit = this.refsCache.get(message);
    if (hit) return hit;
    const refs = refsOfParts(this.resourceRefParts(type, message));
    this.refsCache.set(message, refs);
    return refs;
  }

  /**
   * `resourceRefs` without remembering the resource's own lists (its packed filters' and virtual
   * hosts' parts are remembered as always): for a resource read once, like the EnvoyFilter copy
   * check's patched listener of each proxy class, whose lists (~1.5 KB) a cache would keep as
   * long as the listener lives.
   */
  readRefs(type: XdsType, message: object): ResourceRefs {
    // Endpoints and clusters are never remembered.
    if (type === 'endpoints' || type === 'clusters') return this.resourceRefs(type, message);
    return this.refsCache.get(message) ?? refsOfParts(this.partsCache.get(message) ?? this.partsOf(type, message));
  }

  /**
   * The references of one resource as parts that resources holding the same sub-message share (the
   * same object): one per virtual host of a route config (a virtual host is usually one object in
   * every client namespace's config), one per packed network filter of a listener, one for a
   * cluster. Concatenated in order they are `resourceRefs`. A check that works per part does the
   * work of a shared virtual host once, not once per route config holding it.
   */
  resourceRefParts(type: XdsType, message: object): readonly RefPart[] {
    if (type === 'endpoints') return NO_PARTS;
    if (type === 'clusters') return [clusterPart(message as Cluster)];
    let parts = this.partsCache.get(message);
    if (!parts) this.partsCache.set(message, (parts = this.partsOf(type, message)));
    return parts;
  }

  /** A route config's or a listener's parts, read now. */
  private partsOf(type: 'routes' | 'listeners', message: object): readonly RefPart[] {
    return type === 'routes'
      ? this.routeConfigParts(message as RouteConfiguration)
      : this.listenerParts(message as Listener);
  }

  /** The references of one virtual host (the clusters its routes and mirrors send to): a route config's part. */
  virtualHostRefPart(vh: VirtualHost): RefPart {
    let refs = this.vhostCache.get(vh);
    if (refs) return refs;
    const out: string[] = [];
    virtualHostClusters(vh, out);
    this.vhostCache.set(vh, (refs = out.length ? emptyRefs(out) : EMPTY_PART));
    return refs;
  }

  private listenerParts(l: Listener): readonly RefPart[] {
    const chains = [...(l.filter_chains ?? [])];
    if (l.default_filter_chain) chains.push(l.default_filter_chain);
    const parts: RefPart[] = [];
    for (const chain of chains) {
      for (const filter of chain.filters ?? [])
        if (filter.typed_config) parts.push(this.networkFilterRefs(filter.typed_config));
    }
    const api = l.api_listener?.api_listener;
    if (api) parts.push(this.networkFilterRefs(api));
    return parts;
  }

  private networkFilterRefs(any: Any): RefPart {
    let own = this.filterCache.get(any);
    if (!own) {
      const read = this.known?.filterCache.get(any);
      // A part of its own (a check writes its memo there), the known one's lists (never edited once read).
      if (read) own = { ...read, memoOf: undefined, memo: undefined };
      else decodeFilterRefs(any, (own = emptyRefs()));
      this.filterCache.set(any, own);
    }
    return own;
  }

  private routeConfigParts(rc: RouteConfiguration): readonly RefPart[] {
    const vhosts = rc.virtual_hosts ?? [];
    const parts = new Array<RefPart>(vhosts.length);
    for (let i = 0; i < vhosts.length; i++) parts[i] = this.virtualHostRefPart(vhosts[i] as VirtualHost);
    return parts;
  }
}

const shared = new ReferenceReader();

/** `ReferenceReader.resourceRefs` of the shared reader. */
export const resourceRefs = (type: XdsType, message: object): ResourceRefs => shared.resourceRefs(type, message);

/** `ReferenceReader.readRefs` of the shared reader. */
export const readRefs = (type: XdsType, message: object): ResourceRefs => shared.readRefs(type, message);

/** `ReferenceReader.resourceRefParts` of the shared reader. */
export const resourceRefParts = (type: XdsType, message: object): readonly RefPart[] =>
  shared.resourceRefParts(type, message);

/** `ReferenceReader.virtualHostRefPart` of the shared reader. */
export const virtualHostRefPart = (vh: VirtualHost): RefPart => shared.virtualHostRefPart(vh);

/** The shared reader: references remembered as long as their messages live. */
export const sharedReferences = (): ReferenceReader => shared;

/** The references of these parts, concatenated in order (a resource's `resourceRefs`, from its parts). */
export function refsOfParts(parts: readonly RefPart[]): ResourceRefs {
  const refs: ResourceRefs = { routes: [], endpoints: [], clusters: [], undecodable: [] };
  for (const part of parts)
    for (const kind of ['routes', 'endpoints', 'clusters', 'undecodable'] as const)
      for (const r of part[kind]) refs[kind].push(r);
  return refs;
}

/**
 * A cluster's one part: its EDS service name, read again when asked rather than cached (as cheap as a
 * lookup, and the EnvoyFilter copy check reads every outbound cluster and its copy: a cache of
 * ~20k entries at 10k services, ~10 MB, for nothing).
 */
function clusterPart(c: Cluster): RefPart {
  const ref = clusterEndpointsRef(c);
  return ref === undefined ? EMPTY_PART : { ...emptyRefs(), endpoints: [ref] };
}

/** The one name a cluster refers to: its EDS service name (its own name when unset); undefined when it is not EDS. */
export function clusterEndpointsRef(c: Cluster): string | undefined {
  if (c.type !== EDS) return undefined;
  const serviceName = c.eds_cluster_config?.service_name;
  return serviceName ? serviceName : (c.name ?? '');
}

function decodeFilterRefs(any: Any, refs: ResourceRefs): void {
  const typeName = typeNameOf(any.type_url ?? '');
  if (typeName !== TypeName.HttpConnectionManager && typeName !== TypeName.TcpProxy) return;
  // The message the compiler packed, while it is known (until the Envoy check takes it), is read
  // rather than the bytes it encodes: an inbound HCM's inline route config is not decoded again.
  const packed = packedMessageOf(any);
  const bytes = any.value ?? new Uint8Array();
  try {
    if (typeName === TypeName.HttpConnectionManager) {
      const { rds, routeConfig } = packed ? hcmRefFields(packed as HttpConnectionManager) : hcmRefBytes(bytes);
      if (rds !== undefined) refs.routes.push(rds);
      if (routeConfig) routeConfigRefs(routeConfig, refs);
    } else {
      const tcp = (packed ?? decodeMessage(typeName, bytes)) as TcpProxy;
      if (tcp.cluster) refs.clusters.push(tcp.cluster);
      for (const wc of tcp.weighted_clusters?.clusters ?? []) refs.clusters.push(wc.name ?? '');
    }
  } catch {
    refs.undecodable.push(typeName);
  }
}

/** The fields of an HttpConnectionManager that name other resources: the RDS name and an inline route config. */
interface HcmRefFields {
  readonly rds: string | undefined;
  readonly routeConfig: RouteConfiguration | undefined;
}

const hcmRefFields = (hcm: HttpConnectionManager): HcmRefFields => ({
  rds: hcm.rds ? (hcm.rds.route_config_name ?? '') : undefined,
  routeConfig: hcm.route_config ?? undefined,
});

const Rds = envoy.extensions.filters.network.http_connection_manager.v3.Rds;
const RouteConfigurationCodec = envoy.config.route.v3.RouteConfiguration;
/** HttpConnectionManager's `rds` (3) and `route_config` (4): the only fields that name other resources. */
const HCM_RDS = 3;
const HCM_ROUTE_CONFIG = 4;

/**
 * An HttpConnectionManager's reference fields, read from its bytes: `rds` and `route_config` are decoded,
 * the other fields (the HTTP filters, a large part of every listener) are skipped, not decoded:
 * the consistency check runs on every build, over every listener.
 */
function hcmRefBytes(bytes: Uint8Array): HcmRefFields {
  const reader = protobuf.Reader.create(bytes);
  // As a full decode would: a field given twice keeps its last value.
  let rds: string | undefined;
  let routeConfig: RouteConfiguration | undefined;
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    const field = tag >>> 3;
    if (field === HCM_RDS && (tag & 7) === 2) rds = Rds.decode(reader, reader.uint32()).route_config_name ?? '';
    else if (field === HCM_ROUTE_CONFIG && (tag & 7) === 2)
      routeConfig = RouteConfigurationCodec.decode(reader, reader.uint32());
    else reader.skipType(tag & 7);
  }
  return { rds, routeConfig };
}

/**
 * An inline route config's references (decoded from the HCM's bytes: its virtual hosts are new
 * objects no other resource holds, so they are read straight, without a part or a cache entry each).
 */
function routeConfigRefs(rc: RouteConfiguration, refs: ResourceRefs): void {
  for (const vh of rc.virtual_hosts ?? []) virtualHostClusters(vh, refs.clusters);
}

/** The clusters one virtual host's routes and mirrors send to, in order, appended to `out`. */
function virtualHostClusters(vh: VirtualHost, out: string[]): void {
  for (const m of vh.request_mirror_policies ?? []) if (m.cluster) out.push(m.cluster);
  for (const route of vh.routes ?? []) {
    const action = route.route;
    if (!action) continue;
    if (action.cluster) out.push(action.cluster);
    for (const wc of action.weighted_clusters?.clusters ?? []) if (wc.name) out.push(wc.name);
    for (const m of action.request_mirror_policies ?? []) if (m.cluster) out.push(m.cluster);
  }
}

/**
 * LISTENER, LISTENER_FILTER, FILTER_CHAIN, NETWORK_FILTER and HTTP_FILTER patches, ported from
 * istiod's pilot/pkg/networking/core/envoyfilter/listener_patch.go (ApplyListenerPatches). Copy
 * on write: a listener, chain or filter no patch changes is returned as it came (same object).
 *
 * Also the SIDECAR_INBOUND route-side patches of the route configs inbound HCMs carry inline:
 * istiod applies them while it builds those route configs (buildSidecarInboundHTTPRouteConfig),
 * before the listener patches; meshsnap applies them to the built HCMs, first.
 */
import {
  decodeMessage,
  encodeMessage,
  packAny,
  packedMessageOf,
  withPackedMessage,
  type Any,
  type envoy,
  type FilterChain,
  type HttpConnectionManager,
  type Listener,
  type RouteConfiguration,
} from '../../xds/proto.js';
import { TypeName } from '../../xds/type-urls.js';
import { lengthDelimited, repeatedField, withItems } from '../../xds/wire/splice.js';
import { patchRouteConfiguration, routePatches, type RoutePatches } from './route-patch.js';
import type { PatchContext, ResolvedPatch } from './types.js';
import {
  AnyMergeError,
  anyMessageName,
  filterListOperation,
  isMergeOperation,
  mergeAnyWithAny,
  mergePatchValue,
  patchesFor,
  patchId,
} from './util.js';

type NetworkFilter = envoy.config.listener.v3.Filter.$Properties;
type ListenerFilter = envoy.config.listener.v3.ListenerFilter.$Properties;
type HttpFilter = envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter.$Properties;
type TransportSocket = envoy.config.core.v3.TransportSocket.$Properties;

const LISTENER_TYPE = 'envoy.config.listener.v3.Listener';
const FILTER_CHAIN_TYPE = 'envoy.config.listener.v3.FilterChain';
/** wellknown.HTTPConnectionManager */
export const HCM_FILTER = 'envoy.filters.network.http_connection_manager';
/** model.VirtualInboundListenerName, model.VirtualOutboundListenerName */
const VIRTUAL_LISTENERS = new Set(['virtualInbound', 'virtualOutbound']);

/**
 * What patching found, by chain and by HCM filter, for one context and patch list: a compile's
 * classes patch many groups with the same patches, and their listeners share chains and HCMs
 * (every workload with the same ports has the same ones). Handed to each call with those patches
 * (ListenerPatchMemo), a patched chain or HCM is made once and shared like its original. Results
 * depend on the listener only through its name and port (listenerMatch, filterChainMatch): chains
 * are kept by both.
 */
interface PatchResults {
  /**
   * HCM filters patched, by filter and the positions of the HTTP_FILTER patches that matched it:
   * chains share HCM filters (a port's TLS and plain chains), one patch of the HCM serves them.
   */
  readonly hcmDone: Map<NetworkFilter, Map<string, NetworkFilter>>;
  /** Per listener `name|port`, the chain patched (null: removed). */
  readonly chains: Map<string, Map<FilterChain, FilterChain | null>>;
  /** The inbound HCMs with the route-side patches applied to their inline route configs, and the chains holding them. */
  readonly inlineRoutes: Map<NetworkFilter, NetworkFilter>;
  readonly inlineChains: Map<FilterChain, FilterChain>;
}

const newResults = (): PatchResults => ({
  hcmDone: new Map(),
  chains: new Map(),
  inlineRoutes: new Map(),
  inlineChains: new Map(),
});

/**
 * Patch results shared by the calls of one compile (the EnvoyFilter copier): by context and the
 * patches' identities (`<source>#<index>`, as the copier keys its copies).
 */
export class ListenerPatchMemo {
  private readonly byPatches = new Map<string, PatchResults>();

  resultsFor(ctx: PatchContext, patches: readonly ResolvedPatch[]): PatchResults {
    const key = `${ctx}|${patches.map(patchId).join(',')}`;
    let found = this.byPatches.get(key);
    if (!found) this.byPatches.set(key, (found = newResults()));
    return found;
  }
}

/** The listener-side patches that apply in one context, by applyTo, in istiod's order, and what they made so far. */
interface ListenerPatches extends Pick<PatchResults, 'hcmDone' | 'chains'> {
  readonly listener: readonly ResolvedPatch[];
  readonly listenerFilter: readonly ResolvedPatch[];
  readonly filterChain: readonly ResolvedPatch[];
  readonly networkFilter: readonly ResolvedPatch[];
  readonly httpFilter: readonly ResolvedPatch[];
}

/**
 * istiod's patchListeners (ApplyListenerPatches without its panic recovery, which the caller does):
 * removes and merges per listener, then (unless `skipAdds`) the listener ADDs. Throws PatchPanic.
 */
export function patchListenerList(
  ctx: PatchContext,
  listeners: readonly Listener[],
  patches: readonly ResolvedPatch[],
  skipAdds: boolean,
  memo?: ListenerPatchMemo,
): Listener[] {
  const done = memo?.resultsFor(ctx, patches) ?? newResults();
  const P: ListenerPatches = {
    listener: patchesFor(ctx, patches, 'LISTENER'),
    listenerFilter: patchesFor(ctx, patches, 'LISTENER_FILTER'),
    filterChain: patchesFor(ctx, patches, 'FILTER_CHAIN'),
    networkFilter: patchesFor(ctx, patches, 'NETWORK_FILTER'),
    httpFilter: patchesFor(ctx, patches, 'HTTP_FILTER'),
    hcmDone: done.hcmDone,
    chains: done.chains,
  };
  const out: Listener[] = [];
  for (const lis of listeners) {
    // istiod skips (and then drops) a listener without a name: "removed by another op".
    if (!lis.name) continue;
    const patched = patchListener(P, lis);
    if (patched) out.push(patched);
  }
  if (!skipAdds)
    for (const lp of P.listener) {
      if (lp.operation !== 'ADD') continue;
      // A listener ADD without a context is for sidecar outbound and gateways only.
      if (lp.context === 'ANY' && ctx !== 'SIDECAR_OUTBOUND' && ctx !== 'GATEWAY') continue;
      const value = (lp.value ?? {}) as Listener;
      if (value.name) out.push(value);
    }
  return out;
}

/** One listener patched; null when a patch removes it. */
function patchListener(P: ListenerPatches, lis: Listener): Listener | null {
  let l = lis;
  for (const lp of P.listener) {
    if (!listenerMatch(l, lp)) continue;
    if (lp.operation === 'REMOVE') return null;
    if (isMergeOperation(lp.operation)) l = mergePatchValue(LISTENER_TYPE, lp, l);
  }
  l = patchListenerFilters(P.listenerFilter, l);
  return patchFilterChains(P, l);
}

const hasListenerFilterMatch = (lp: ResolvedPatch): boolean => !!lp.listener?.listenerFilter;

function listenerFilterMatch(filter: ListenerFilter, lp: ResolvedPatch): boolean {
  return !hasListenerFilterMatch(lp) || lp.listener?.listenerFilter === (filter.name ?? '');
}

function patchListenerFilters(patches: readonly ResolvedPatch[], lis: Listener): Listener {
  const before = (lis.listener_filters ?? []) as ListenerFilter[];
  let filters = before;
  for (const lp of patches) {
    if (!listenerMatch(lis, lp)) continue;
    const value = (lp.value ?? {}) as ListenerFilter;
    const matches = (f: ListenerFilter) => listenerFilterMatch(f, lp);
    filters =
      lp.operation === 'MERGE'
        ? hasListenerFilterMatch(lp)
          ? mapChanged(filters, (f) => mergeListenerFilter(lp, f))
          : filters
        : filterListOperation(filters, lp.operation, value, hasListenerFilterMatch(lp), matches);
  }
  return filters === before ? lis : { ...lis, listener_filters: filters };
}

/**
 * istiod's mergeListenerFilter. It merges into every listener filter of the matched listener (its
 * caller does not check the filter's name), and the patch's name is not applied: istiod assigns it
 * to the patch value, not to the filter.
 */
function mergeListenerFilter(lp: ResolvedPatch, filter: ListenerFilter): ListenerFilter {
  const dst = filter.typed_config as Any | null | undefined;
  if (!dst) return filter;
  const src = (lp.value as ListenerFilter | undefined)?.typed_config as Any | null | undefined;
  if (!src) return filter;
  const merged = mergeAnyOrKeep(lp, dst, src);
  return merged === dst ? filter : { ...filter, typed_config: merged };
}

/** MergeAnyWithAny; on an error (not a panic) istiod keeps the filter's own typed config. */
function mergeAnyOrKeep(lp: ResolvedPatch, dst: Any, src: Any): Any {
  try {
    return mergeAnyWithAny(lp, dst, src);
  } catch (e) {
    if (e instanceof AnyMergeError) return dst;
    throw e;
  }
}

/** `list` with `f` applied to each element; the same array when `f` changed none. */
function mapChanged<E>(list: E[], f: (e: E) => E): E[] {
  let out: E[] | null = null;
  list.forEach((e, i) => {
    const n = f(e);
    if (n !== e) (out ??= [...list])[i] = n;
  });
  return out ?? list;
}

/** A chain istiod treats as removed (its filters nil): absent filters. */
const REMOVED: NetworkFilter[] = [];
const chainFilters = (fc: FilterChain): NetworkFilter[] | null =>
  fc.filters == null ? null : (fc.filters as NetworkFilter[]);

function patchFilterChains(P: ListenerPatches, lis: Listener): Listener {
  const before = (lis.filter_chains ?? []) as FilterChain[];
  // A chain whose filters are nil (none given, or removed by a patch) is dropped at the end.
  let chains: (FilterChain | null)[] = before.map((fc) =>
    chainFilters(fc) === null ? null : patchFilterChain(P, lis, fc),
  );
  let changed = chains.some((c, i) => c !== before[i]);

  let defaultChain = lis.default_filter_chain;
  if (defaultChain && chainFilters(defaultChain) !== null) {
    const patched = patchFilterChain(P, lis, defaultChain);
    if (patched !== defaultChain) {
      defaultChain = patched;
      changed = true;
    }
  }

  for (const lp of P.filterChain) {
    if (lp.operation !== 'ADD' || !listenerMatch(lis, lp)) continue;
    const value = (lp.value ?? {}) as FilterChain;
    chains = [...chains, chainFilters(value) === null ? null : value];
    changed = true;
  }
  if (!changed) return lis;
  const out: Listener = { ...lis, filter_chains: chains.filter((c): c is FilterChain => c !== null) };
  if (defaultChain !== lis.default_filter_chain) out.default_filter_chain = defaultChain ?? null;
  return out;
}

/** One chain's patches; null when a FILTER_CHAIN REMOVE matches it. */
function patchFilterChain(P: ListenerPatches, lis: Listener, chain: FilterChain): FilterChain | null {
  const at = `${lis.name ?? ''}|${lis.address?.socket_address?.port_value ?? 0}`;
  let done = P.chains.get(at);
  if (!done) P.chains.set(at, (done = new Map()));
  const known = done.get(chain);
  if (known !== undefined) return known;
  const patched = patchedChain(P, lis, chain);
  done.set(chain, patched);
  return patched;
}

function patchedChain(P: ListenerPatches, lis: Listener, chain: FilterChain): FilterChain | null {
  let fc = chain;
  for (const lp of P.filterChain) {
    if (!listenerMatch(lis, lp) || !filterChainMatch(lis, fc, lp)) continue;
    if (lp.operation === 'REMOVE') return null;
    if (!isMergeOperation(lp.operation)) continue;
    const ts = mergeTransportSocketListener(fc, lp);
    if (ts === 'error') continue;
    if (ts === 'outer') fc = mergePatchValue(FILTER_CHAIN_TYPE, lp, fc);
    else fc = ts;
  }
  return patchNetworkFilters(P, lis, fc);
}

/**
 * istiod's mergeTransportSocketListener: when the patch and the chain have transport sockets of
 * the same name, their typed configs are merged and nothing else of the patch is ('merged' chain
 * returned); otherwise the caller merges the whole value ('outer'); 'error': the typed configs
 * could not be read, the patch is skipped.
 */
function mergeTransportSocketListener(fc: FilterChain, lp: ResolvedPatch): FilterChain | 'outer' | 'error' {
  const patchTs = (lp.value as FilterChain | undefined)?.transport_socket as TransportSocket | null | undefined;
  const ts = fc.transport_socket as TransportSocket | null | undefined;
  if (!patchTs || !ts) return 'outer';
  if ((patchTs.name ?? '') !== (ts.name ?? '')) return 'outer';
  const dst = ts.typed_config as Any | null | undefined;
  const src = patchTs.typed_config as Any | null | undefined;
  if (!dst || !src) return fc;
  try {
    return { ...fc, transport_socket: { ...ts, typed_config: mergeAnyWithAny(lp, dst, src) } };
  } catch (e) {
    if (e instanceof AnyMergeError) return 'error';
    throw e;
  }
}

const hasNetworkFilterMatch = (lp: ResolvedPatch): boolean => lp.listener?.filterChain?.filter !== undefined;

function networkFilterMatch(filter: NetworkFilter, lp: ResolvedPatch): boolean {
  return !hasNetworkFilterMatch(lp) || (lp.listener?.filterChain?.filter?.name ?? '') === (filter.name ?? '');
}

const hasHttpFilterMatch = (lp: ResolvedPatch): boolean =>
  hasNetworkFilterMatch(lp) && lp.listener?.filterChain?.filter?.subFilter !== undefined;

function httpFilterMatch(filter: HttpFilter, lp: ResolvedPatch): boolean {
  return !hasHttpFilterMatch(lp) || (lp.listener?.filterChain?.filter?.subFilter?.name ?? '') === (filter.name ?? '');
}

function patchNetworkFilters(P: ListenerPatches, lis: Listener, chain: FilterChain): FilterChain {
  const before = chainFilters(chain) ?? REMOVED;
  let filters = before;
  for (const lp of P.networkFilter) {
    if (!listenerMatch(lis, lp) || !filterChainMatch(lis, chain, lp)) continue;
    const value = (lp.value ?? {}) as NetworkFilter;
    const matches = (f: NetworkFilter) => networkFilterMatch(f, lp);
    filters = filterListOperation(filters, lp.operation, value, hasNetworkFilterMatch(lp), matches);
  }
  filters = mapChanged(filters, (f) => patchNetworkFilter(P, lis, chain, f));
  return filters === before ? chain : { ...chain, filters };
}

/** A network filter's MERGEs, then the HTTP filter patches when it is the HCM. */
function patchNetworkFilter(P: ListenerPatches, lis: Listener, fc: FilterChain, filter: NetworkFilter): NetworkFilter {
  let f = filter;
  for (const lp of P.networkFilter) {
    if (!listenerMatch(lis, lp) || !filterChainMatch(lis, fc, lp) || !networkFilterMatch(f, lp)) continue;
    // Only MERGE (not MERGE_AND_REPLACE_LIST), and only into a filter with a typed config.
    if (lp.operation !== 'MERGE') continue;
    const dst = f.typed_config as Any | null | undefined;
    if (!dst) continue;
    const user = (lp.value ?? {}) as NetworkFilter;
    const src = user.typed_config as Any | null | undefined;
    const merged = src ? mergeAnyOrKeep(lp, dst, src) : dst;
    // The patch may rename the filter.
    const name = user.name ? user.name : f.name;
    if (merged !== dst || name !== f.name) f = { ...f, name, typed_config: merged };
  }
  return f.name === HCM_FILTER ? patchHttpFilters(P, lis, fc, f) : f;
}

function patchHttpFilters(P: ListenerPatches, lis: Listener, fc: FilterChain, filter: NetworkFilter): NetworkFilter {
  const patches = P.httpFilter.filter(
    (lp) => listenerMatch(lis, lp) && filterChainMatch(lis, fc, lp) && networkFilterMatch(filter, lp),
  );
  if (patches.length === 0) return filter;
  const key = patches.map((lp) => P.httpFilter.indexOf(lp)).join(',');
  let done = P.hcmDone.get(filter);
  if (!done) P.hcmDone.set(filter, (done = new Map()));
  let out = done.get(key);
  if (!out) done.set(key, (out = patchHcm(patches, filter)));
  return out;
}

function patchHcm(patches: readonly ResolvedPatch[], filter: NetworkFilter): NetworkFilter {
  // Without a typed config, or with one that is not an HCM, istiod's edits are not written back.
  const any = filter.typed_config as Any | null | undefined;
  if (!any || anyMessageName(any.type_url ?? '') !== TypeName.HttpConnectionManager) return filter;
  // The message the compiler packed, when it is still known (its bytes are then edited in place);
  // else the bytes decoded.
  const packed = packedMessageOf(any) as HttpConnectionManager | undefined;
  let hcm: HttpConnectionManager;
  try {
    hcm =
      packed ?? (decodeMessage(TypeName.HttpConnectionManager, any.value ?? new Uint8Array()) as HttpConnectionManager);
  } catch {
    return filter;
  }
  const before = (hcm.http_filters ?? []) as HttpFilter[];
  let filters = before;
  for (const lp of patches) {
    const value = (lp.value ?? {}) as HttpFilter;
    const matches = (f: HttpFilter) => httpFilterMatch(f, lp);
    filters = filterListOperation(filters, lp.operation, value, hasHttpFilterMatch(lp), matches);
  }
  filters = mapChanged(filters, (hf) => mergeHttpFilter(patches, hf));
  if (filters === before) return filter;
  const next = { ...hcm, http_filters: filters };
  const edited = packed && any.value ? withHttpFilters(any.value, before, filters) : undefined;
  return {
    ...filter,
    typed_config: edited
      ? withPackedMessage({ type_url: any.type_url, value: edited }, next)
      : packAny(TypeName.HttpConnectionManager, next),
  };
}

/** HttpConnectionManager.http_filters */
const HTTP_FILTERS_FIELD = 5;
/** Each HTTP filter a patch adds, encoded as an `http_filters` item once (the same patch value goes into every HCM). */
const filterItems = new WeakMap<HttpFilter, Uint8Array>();
const HTTP_FILTER_TYPE = 'envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter';

/**
 * The HCM `bytes` (the encoding of a message whose `http_filters` are `before`) with `after` as
 * its HTTP filters: the kept filters' bytes reused, the others encoded; undefined when the bytes
 * cannot be edited so (src/xds/wire/splice.ts).
 */
function withHttpFilters(
  bytes: Uint8Array,
  before: readonly HttpFilter[],
  after: readonly HttpFilter[],
): Uint8Array | undefined {
  const field = repeatedField(bytes, HTTP_FILTERS_FIELD);
  if (!field || field.items.length !== before.length) return undefined;
  const kept = new Map<HttpFilter, Uint8Array>();
  before.forEach((f, i) => kept.set(f, field.items[i] as Uint8Array));
  const items = after.map((f) => {
    let item = kept.get(f) ?? filterItems.get(f);
    if (!item) {
      item = lengthDelimited(HTTP_FILTERS_FIELD, encodeMessage(HTTP_FILTER_TYPE, f));
      filterItems.set(f, item);
    }
    return item;
  });
  return withItems(field, items);
}

/** istiod's mergeHTTPFilter: the MERGEs that match this HTTP filter. */
function mergeHttpFilter(patches: readonly ResolvedPatch[], httpFilter: HttpFilter): HttpFilter {
  let hf = httpFilter;
  for (const lp of patches) {
    if (lp.operation !== 'MERGE' || !httpFilterMatch(hf, lp)) continue;
    const dst = hf.typed_config as Any | null | undefined;
    if (!dst) continue;
    const user = (lp.value ?? {}) as HttpFilter;
    const src = user.typed_config as Any | null | undefined;
    const merged = src ? mergeAnyOrKeep(lp, dst, src) : dst;
    const name = user.name ? user.name : hf.name;
    if (merged !== dst || name !== hf.name) hf = { ...hf, name, typed_config: merged };
  }
  return hf;
}

const isVirtual = (lis: Listener): boolean => VIRTUAL_LISTENERS.has(lis.name ?? '');

/** istiod's listenerMatch. */
export function listenerMatch(lis: Listener, lp: ResolvedPatch): boolean {
  const m = lp.listener;
  if (!m) return true;
  if (m.name && m.name !== (lis.name ?? '')) return false;
  // The virtual listeners' port is matched per filter chain (filterChainMatch), except by LISTENER patches.
  if (lp.applyTo !== 'LISTENER' && isVirtual(lis)) return true;
  if (m.portNumber) {
    const port = lis.address?.socket_address?.port_value ?? 0;
    if (port !== m.portNumber) return false;
  }
  return true;
}

/** istiod's filterChainMatch (the listener already matched). */
export function filterChainMatch(lis: Listener, fc: FilterChain, lp: ResolvedPatch): boolean {
  const m = lp.listener;
  if (!m) return true;
  const fcm = fc.filter_chain_match;
  if (isVirtual(lis) && m.portNumber && (fcm?.destination_port?.value ?? 0) !== m.portNumber) return false;
  const match = m.filterChain;
  if (!match) return true;
  if (match.name && match.name !== (fc.name ?? '')) return false;
  if (match.sni && !(fcm?.server_names ?? []).includes(match.sni)) return false;
  if (match.transportProtocol && (fcm?.transport_protocol ?? '') !== match.transportProtocol) return false;
  if (match.applicationProtocols) {
    if (!fcm) return false;
    const alpn = fcm.application_protocols ?? [];
    for (const p of match.applicationProtocols.split(',')) if (!alpn.includes(p)) return false;
  }
  if (match.destinationPort && (fcm?.destination_port?.value ?? 0) !== match.destinationPort) return false;
  return true;
}

/**
 * The SIDECAR_INBOUND route-side patches applied to the route configs of the inbound HCMs
 * (`route_config`, inline): istiod patches each inbound route config it builds with them. A
 * filter shared by several chains is patched once (the result depends on the filter alone).
 */
export function patchInlineRouteConfigs(
  listeners: readonly Listener[],
  patches: readonly ResolvedPatch[],
  memo?: ListenerPatchMemo,
): Listener[] {
  const P = routePatches('SIDECAR_INBOUND', patches);
  if (!P) return [...listeners];
  const { inlineRoutes: done, inlineChains } = memo?.resultsFor('SIDECAR_INBOUND', patches) ?? newResults();
  const patchFilter = (f: NetworkFilter): NetworkFilter => {
    let out = done.get(f);
    if (!out) done.set(f, (out = inlineRoutePatched(P, f)));
    return out;
  };
  const patchChain = (fc: FilterChain): FilterChain => {
    const filters = fc.filters as NetworkFilter[] | null | undefined;
    if (!filters) return fc;
    let out = inlineChains.get(fc);
    if (!out) {
      const next = mapChanged(filters, patchFilter);
      inlineChains.set(fc, (out = next === filters ? fc : { ...fc, filters: next }));
    }
    return out;
  };
  return listeners.map((lis) => {
    const chains = (lis.filter_chains ?? []) as FilterChain[];
    const nextChains = mapChanged(chains, patchChain);
    const dfc = lis.default_filter_chain;
    const nextDefault = dfc ? patchChain(dfc) : dfc;
    if (nextChains === chains && nextDefault === dfc) return lis;
    const out: Listener = { ...lis, filter_chains: nextChains };
    if (nextDefault !== dfc) out.default_filter_chain = nextDefault;
    return out;
  });
}

function inlineRoutePatched(P: RoutePatches, filter: NetworkFilter): NetworkFilter {
  const any = filter.typed_config as Any | null | undefined;
  if (filter.name !== HCM_FILTER || !any || anyMessageName(any.type_url ?? '') !== TypeName.HttpConnectionManager)
    return filter;
  let hcm: HttpConnectionManager;
  try {
    hcm = decodeMessage(TypeName.HttpConnectionManager, any.value ?? new Uint8Array()) as HttpConnectionManager;
  } catch {
    return filter;
  }
  const rc = hcm.route_config as RouteConfiguration | null | undefined;
  if (!rc) return filter;
  const patched = patchRouteConfiguration(P, rc);
  if (patched === rc) return filter;
  return { ...filter, typed_config: packAny(TypeName.HttpConnectionManager, { ...hcm, route_config: patched }) };
}

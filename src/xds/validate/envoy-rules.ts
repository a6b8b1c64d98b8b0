/**
 * Envoy's own rules beyond the protos' `validate.rules`: what Envoy checks in code when it loads a
 * resource, and NACKs. Each hook is keyed by the message type it checks, and each rule cites where
 * Envoy documents it (the API docs of the field, or the error Envoy answers with). Rule ids start
 * with `envoy.` so they read apart from protoc-gen-validate's.
 */
import { codecOf, envoy } from '../proto.js';
import { regexProblem } from '../re2.js';
import { domainClashes } from './domains-unique.js';
import type { MessageHook, Walk } from './walker.js';
import { toNumber } from './scalar-rules.js';

type Msg = Record<string, unknown>;
const list = (v: unknown): readonly Msg[] => (Array.isArray(v) ? (v as Msg[]) : []);
const wrapped = (v: unknown): number | undefined =>
  v === undefined || v === null ? undefined : toNumber((v as { value?: unknown }).value);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/**
 * Every `RegexMatcher` (route, header, query and CORS matchers, regex rewrites, …) is compiled
 * with RE2 when Envoy loads it, and a pattern RE2 refuses, or whose program is over
 * `re2.max_program_size.error_level`, NACKs the resource (type/matcher/v3/regex.proto, `regex`;
 * src/xds/re2.ts).
 */
const regexMatcher: MessageHook = (m, walk) => {
  const why = regexProblem(str(m.regex));
  if (why) walk.report({ rule: 'envoy.re2', message: why }, 'regex');
};

const UINT32_MAX = 0xffffffff;

/**
 * route_components.proto, WeightedCluster: at least one cluster (a `validate.rules`), "the sum of
 * all cluster weights must equal [total_weight], if this is greater than 0" (total_weight is
 * deprecated, and Envoy then uses the sum), and Envoy refuses a sum of 0 ("Sum of weights in the
 * weighted_cluster must be greater than 0") or one over uint32 (config_impl.cc).
 */
const weightedCluster: MessageHook = (m, walk) => {
  const clusters = list(m.clusters);
  if (clusters.length === 0) return;
  let sum = 0;
  for (const c of clusters) sum += wrapped(c.weight) ?? 0;
  if (sum === 0)
    walk.report(
      { rule: 'envoy.weighted_clusters.sum', message: 'the weights add up to 0; Envoy needs a positive sum' },
      'clusters',
    );
  else if (sum > UINT32_MAX)
    walk.report(
      { rule: 'envoy.weighted_clusters.sum', message: `the weights add up to ${sum}, over the uint32 maximum` },
      'clusters',
    );
  const total = wrapped(m.total_weight);
  if (total !== undefined && total > 0 && sum !== total)
    walk.report(
      {
        rule: 'envoy.weighted_clusters.total_weight',
        message: `the weights add up to ${sum}, not total_weight ${total}`,
      },
      'clusters',
    );
};

/**
 * route_components.proto, VirtualHost.domains: "Only a single virtual host in the entire route
 * configuration can match on `*`. A domain must be unique across all virtual hosts or the config
 * will fail to load." Envoy compares them lower-cased (config_impl.cc).
 */
const routeConfiguration: MessageHook = (m, walk) => {
  const hosts = list(m.virtual_hosts);
  for (const c of domainClashes(str(m.name), hosts)) {
    const domains = (hosts[c.host]?.domains ?? []) as readonly string[];
    walk.report(
      {
        rule: 'envoy.virtual_host.domains_unique',
        message: `domain ${JSON.stringify(domains[c.domain])} is also a domain of virtual host ${JSON.stringify(str(hosts[c.first]?.name))}`,
      },
      'virtual_hosts',
      c.host,
      'domains',
      c.domain,
    );
  }
};

/** Above this many match combinations a filter chain is compared whole rather than expanded. */
const MAX_LEAVES = 4096;

const cidrKey = (c: Msg): string => `${str(c.address_prefix)}/${wrapped(c.prefix_len) ?? ''}`;

/**
 * The leaves of Envoy's filter chain match tree that one FilterChainMatch occupies: one key per
 * combination of its list values (a single-valued dimension is joined once, not multiplied).
 */
function matchLeaves(fcm: Msg | null | undefined): string[] | undefined {
  const m = fcm ?? {};
  const dims: (readonly string[])[] = [
    [String(wrapped(m.destination_port) ?? '')],
    list(m.prefix_ranges).map(cidrKey),
    [`${str(m.address_suffix)}/${wrapped(m.suffix_len) ?? ''}`],
    ((m.server_names ?? []) as readonly string[]).map((s) => str(s).toLowerCase()),
    [str(m.transport_protocol)],
    ((m.application_protocols ?? []) as readonly string[]).map(str),
    list(m.direct_source_prefix_ranges).map(cidrKey),
    [String(toNumber(m.source_type))],
    list(m.source_prefix_ranges).map(cidrKey),
    ((m.source_ports ?? []) as readonly unknown[]).map((p) => String(toNumber(p))),
  ];
  let leaves = [''];
  for (let d = 0; d < dims.length; d++) {
    const values = dims[d] as readonly string[];
    if (values.length <= 1) {
      const v = `\u0000${d}:${values[0] ?? ''}`;
      for (let i = 0; i < leaves.length; i++) leaves[i] += v;
    } else {
      if (leaves.length * values.length > MAX_LEAVES) return undefined;
      const next: string[] = [];
      for (const l of leaves) for (const v of values) next.push(`${l}\u0000${d}:${v}`);
      leaves = next;
    }
  }
  return leaves;
}

// A FilterChainMatch is often one object in many listeners (the passthrough chains of every
// virtualInbound): its leaves are computed once per object (messages are immutable once built).
const leavesCache = new WeakMap<object, readonly string[]>();

function chainLeaves(fcm: Msg | null | undefined): readonly string[] {
  const cached = fcm ? leavesCache.get(fcm) : undefined;
  if (cached) return cached;
  const leaves = matchLeaves(fcm) ?? [`whole\u0000${JSON.stringify(fcm ?? {})}`];
  if (fcm) leavesCache.set(fcm, leaves);
  return leaves;
}

/**
 * Listener filter chains: Envoy refuses two chains with the same matching rules ("multiple filter
 * chains with the same matching rules are defined"), including rules that are only equivalent once
 * their lists are expanded into the match tree ("… effectively equivalent matching rules …";
 * envoyproxy/envoy#6905). With `filter_chain_matcher` set, listener.proto asks instead for "a
 * non-empty and unique name" on every chain and no `filter_chain_match`.
 */
const listener: MessageHook = (m, walk) => {
  const chains = list(m.filter_chains);
  if (m.filter_chain_matcher !== undefined && m.filter_chain_matcher !== null) {
    const names = new Set<string>();
    for (let i = 0; i < chains.length; i++) {
      const name = str(chains[i]?.name);
      if (!name || names.has(name))
        walk.report(
          {
            rule: 'envoy.filter_chain.name_unique',
            message: 'with filter_chain_matcher every filter chain needs a unique, non-empty name',
          },
          'filter_chains',
          i,
          'name',
        );
      names.add(name);
    }
    return;
  }
  // Only two chains can clash (a chain's own leaves may repeat): most listeners have one, or none.
  if (chains.length < 2) return;
  const owner = new Map<string, number>();
  for (let i = 0; i < chains.length; i++) {
    const fcm = chains[i]?.filter_chain_match as Msg | null | undefined;
    for (const leaf of chainLeaves(fcm)) {
      const first = owner.get(leaf);
      if (first === undefined) owner.set(leaf, i);
      else if (first !== i) {
        walk.report(
          {
            rule: 'envoy.filter_chain.match_unique',
            message: `matches the same connections as filter_chains[${first}]${chains[first]?.name ? ` (${str(chains[first]?.name)})` : ''}`,
          },
          'filter_chains',
          i,
          'filter_chain_match',
        );
        break;
      }
    }
  }
};

const DiscoveryType = envoy.config.cluster.v3.Cluster.DiscoveryType;
const LbPolicy = envoy.config.cluster.v3.Cluster.LbPolicy;

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const isIp = (a: string): boolean => IPV4.test(a) || (a.includes(':') && /^[0-9a-fA-F:.]+(%.+)?$/.test(a));

/**
 * Cluster discovery type against its other fields (cluster.proto and the service discovery
 * architecture docs):
 * - `ORIGINAL_DST`: "lb_policy must be CLUSTER_PROVIDED" ("Only 'CLUSTER_PROVIDED' is allowed
 *   with cluster type 'ORIGINAL_DST'") and no load_assignment ("ORIGINAL_DST clusters must have
 *   no load assignment configured"); `CLUSTER_PROVIDED` is refused with the other built-in types;
 * - `LOGICAL_DNS`: "LOGICAL_DNS clusters must have a single locality_lb_endpoint and a single
 *   lb_endpoint";
 * - `STATIC`: its load_assignment endpoints are addresses, not names (Envoy parses them as IPs:
 *   "malformed IP address"); a name needs STRICT_DNS or LOGICAL_DNS.
 */
const cluster: MessageHook = (m, walk) => {
  if (m.cluster_type !== undefined && m.cluster_type !== null) {
    customCluster(m, walk); // a custom cluster type decides
    return;
  }
  const type = toNumber(m.type);
  const lb = toNumber(m.lb_policy);
  const la = m.load_assignment as Msg | null | undefined;
  if (type === DiscoveryType.ORIGINAL_DST) {
    if (lb !== LbPolicy.CLUSTER_PROVIDED)
      walk.report(
        { rule: 'envoy.cluster.original_dst_lb', message: 'an ORIGINAL_DST cluster needs lb_policy CLUSTER_PROVIDED' },
        'lb_policy',
      );
    if (la !== undefined && la !== null)
      walk.report(
        {
          rule: 'envoy.cluster.original_dst_load_assignment',
          message: 'an ORIGINAL_DST cluster must have no load_assignment',
        },
        'load_assignment',
      );
  } else if (lb === LbPolicy.CLUSTER_PROVIDED) {
    walk.report(
      {
        rule: 'envoy.cluster.cluster_provided_lb',
        message: 'lb_policy CLUSTER_PROVIDED is only for ORIGINAL_DST clusters',
      },
      'lb_policy',
    );
  }
  if (type === DiscoveryType.LOGICAL_DNS) {
    const localities = list(la?.endpoints);
    if (localities.length !== 1 || list(localities[0]?.lb_endpoints).length !== 1)
      walk.report(
        {
          rule: 'envoy.cluster.logical_dns_single_endpoint',
          message: 'a LOGICAL_DNS cluster needs exactly one locality with exactly one endpoint',
        },
        'load_assignment',
        'endpoints',
      );
  }
  if (type === DiscoveryType.STATIC) {
    const localities = list(la?.endpoints);
    for (let i = 0; i < localities.length; i++) {
      const eps = list(localities[i]?.lb_endpoints);
      for (let j = 0; j < eps.length; j++) {
        const sa = ((eps[j]?.endpoint as Msg | undefined)?.address as Msg | undefined)?.socket_address as
          Msg | undefined;
        if (sa && !isIp(str(sa.address)))
          walk.report(
            {
              rule: 'envoy.cluster.static_ip',
              message: `a STATIC cluster's endpoint must be an IP address, not ${JSON.stringify(str(sa.address))}`,
            },
            'load_assignment',
            'endpoints',
            i,
            'lb_endpoints',
            j,
            'endpoint',
            'address',
            'socket_address',
            'address',
          );
      }
    }
  }
};

const DFP_CLUSTER = 'envoy.clusters.dynamic_forward_proxy';
const DFP_CONFIG = 'envoy.extensions.clusters.dynamic_forward_proxy.v3.ClusterConfig';
const HTTP_PROTOCOL_OPTIONS = 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions';

/** The message an `Any` of type `typeName` holds (decoded again: the walker decodes it on its own); undefined if it is another type or undecodable. */
function unpack(any: unknown, typeName: string): Msg | undefined {
  const a = any as Msg | null | undefined;
  if (!a || str(a.type_url) !== `type.googleapis.com/${typeName}` || !(a.value instanceof Uint8Array)) return undefined;
  try {
    return codecOf(typeName)?.decode(a.value) as Msg | undefined;
  } catch {
    return undefined;
  }
}

/**
 * The dynamic forward proxy cluster (clusters/dynamic_forward_proxy/cluster.cc): its lb_policy must
 * be CLUSTER_PROVIDED ("Only 'CLUSTER_PROVIDED' is allowed with cluster type
 * 'envoy.clusters.dynamic_forward_proxy'"), and unless `allow_insecure_cluster_options` its upstream
 * HTTP options must set auto_sni and auto_san_validation ("dynamic_forward_proxy cluster must have
 * auto_sni and auto_san_validation true unless allow_insecure_cluster_options is set."). The options
 * are the typed HttpProtocolOptions' when the cluster has them, else the cluster's own field; with
 * neither Envoy sets both itself.
 */
function customCluster(m: Msg, walk: Walk): void {
  const type = m.cluster_type as Msg;
  if (str(type.name) !== DFP_CLUSTER) return;
  if (toNumber(m.lb_policy) !== LbPolicy.CLUSTER_PROVIDED)
    walk.report(
      { rule: 'envoy.cluster.dfp_lb', message: 'a dynamic_forward_proxy cluster needs lb_policy CLUSTER_PROVIDED' },
      'lb_policy',
    );
  const config = unpack(type.typed_config, DFP_CONFIG);
  if (!config || config.allow_insecure_cluster_options === true) return;
  const typedAny = (m.typed_extension_protocol_options as Record<string, unknown> | null | undefined)?.[
    HTTP_PROTOCOL_OPTIONS
  ];
  const typed = typedAny === undefined ? undefined : unpack(typedAny, HTTP_PROTOCOL_OPTIONS);
  const options = (typed ? typed.upstream_http_protocol_options : m.upstream_http_protocol_options) as
    Msg | null | undefined;
  if (!typed && (options === undefined || options === null)) return;
  if (options?.auto_sni !== true || options.auto_san_validation !== true)
    walk.report(
      {
        rule: 'envoy.cluster.dfp_auto_sni',
        message:
          'a dynamic_forward_proxy cluster must have auto_sni and auto_san_validation true unless allow_insecure_cluster_options is set',
      },
      'cluster_type',
    );
}

const ROUTER_URL = 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router';

/**
 * HttpConnectionManager.http_filters: the router is terminal. Envoy refuses a chain whose router
 * is not last ("terminal filter named … must be the last filter in a http filter chain") and one
 * whose last filter is not terminal ("non-terminal filter named … is the last filter in a http
 * filter chain"); meshsnap emits no other terminal HTTP filter.
 */
const httpConnectionManager: MessageHook = (m, walk) => {
  const filters = list(m.http_filters);
  for (let i = 0; i < filters.length; i++) {
    const f = filters[i] as Msg;
    const url = str((f.typed_config as Msg | null | undefined)?.type_url);
    if (!url) continue; // a config_discovery filter: its type is not known here
    const last = i === filters.length - 1;
    if (url === ROUTER_URL && !last)
      walk.report(
        {
          rule: 'envoy.http_filters.terminal_last',
          message: `terminal filter ${JSON.stringify(str(f.name))} must be the last filter`,
        },
        'http_filters',
        i,
      );
    if (url !== ROUTER_URL && last)
      walk.report(
        {
          rule: 'envoy.http_filters.terminal_last',
          message: `non-terminal filter ${JSON.stringify(str(f.name))} is the last filter`,
        },
        'http_filters',
        i,
      );
  }
};

/**
 * A listener filter names its extension by its typed config's type URL: Envoy finds none for a
 * filter with neither a typed config nor a config_discovery, and rejects the listener
 * ("Didn't find a registered implementation for '…' with type URL: ''", envoyproxy/envoy#36121).
 */
const listenerFilter: MessageHook = (m, walk) => {
  const typed = m.typed_config as Msg | null | undefined;
  if (str(typed?.type_url) || (m.config_discovery !== undefined && m.config_discovery !== null)) return;
  walk.report({
    rule: 'envoy.listener_filter.typed_config',
    message: `listener filter ${JSON.stringify(str(m.name))} has no typed_config: Envoy finds no implementation for it`,
  });
};

/** Hooks by message type. */
export const ENVOY_RULES: Readonly<Record<string, MessageHook>> = {
  'envoy.config.listener.v3.ListenerFilter': listenerFilter,
  'envoy.type.matcher.v3.RegexMatcher': regexMatcher,
  'envoy.config.route.v3.WeightedCluster': weightedCluster,
  'envoy.config.route.v3.RouteConfiguration': routeConfiguration,
  'envoy.config.listener.v3.Listener': listener,
  'envoy.config.cluster.v3.Cluster': cluster,
  'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager': httpConnectionManager,
};

export type { Walk };

/**
 * `explain`: where a request from a proxy goes, and why — listener, filter chain, HTTP filters,
 * route config, virtual host, route (and why earlier routes did not match), clusters with weights
 * and endpoints, and the Istio objects behind each piece. It reads only the proxy's decoded
 * resources (no store, no Node built-ins), so the CLI, the API and a Worker answer the same. Pure.
 */
import { detectConnection } from './detection.js';
import { matchFilterChain, matchOf } from './filter-chain-match.js';
import { isIp } from './ip.js';
import { obj, objects, str, strings, type JsonObject } from './json.js';
import { matchListener } from './listener-match.js';
import {
  hcmStripsPort,
  httpFilters,
  routeConfigOf,
  tcpProxyTargets,
  terminalFilter,
  weightedTargets,
  type WeightedTarget,
} from './network-filters.js';
import { normalizeRequestPath } from './path-normalize.js';
import { provenanceLabel, provenanceOf, uniqueProvenance } from './provenance.js';
import { firstMatchingRoute } from './route-match.js';
import type {
  ClusterAnswer,
  ExplainRequest,
  Explanation,
  FilterChainAnswer,
  Outcome,
  Provenance,
  ProxyResources,
  RouteAnswer,
  VirtualHostAnswer,
} from './types.js';
import { clusterAnswer } from './upstream.js';
import { hostForMatching, matchVirtualHost, virtualHostsOf } from './vhost-match.js';

const REDIRECT_STATUS: Readonly<Record<string, number>> = {
  MOVED_PERMANENTLY: 301,
  FOUND: 302,
  SEE_OTHER: 303,
  TEMPORARY_REDIRECT: 307,
  PERMANENT_REDIRECT: 308,
};

/** What a client puts in `Host`: the port only when it is not the scheme's default. */
export function defaultAuthority(req: Pick<ExplainRequest, 'host' | 'port' | 'tls'>): string {
  const defaultPort = req.tls ? 443 : 80;
  const host = req.host.includes(':') && !req.host.startsWith('[') ? `[${req.host}]` : req.host;
  return req.port === defaultPort ? host : `${host}:${req.port}`;
}

type Answered = Omit<Explanation, 'request' | 'outcome' | 'summary' | 'status' | 'clusters' | 'provenance' | 'notes'>;

/** Mutable pieces of an answer while it is being built. */
interface Draft {
  outcome?: Outcome;
  summary?: string;
  status?: number;
  notes: string[];
  clusters: ClusterAnswer[];
  rest: { -readonly [K in keyof Answered]?: Answered[K] };
}

function finish(req: ExplainRequest, d: Draft): Explanation {
  const pieces: (readonly Provenance[])[] = [
    d.rest.filterChain?.provenance ?? [],
    d.rest.virtualHost?.provenance ?? [],
    d.rest.route?.provenance ?? [],
    ...d.clusters.map((c) => c.provenance),
  ];
  return {
    request: req,
    outcome: d.outcome ?? 'unsupported',
    summary: d.summary ?? 'explain could not follow this request',
    ...(d.status !== undefined ? { status: d.status } : {}),
    ...d.rest,
    clusters: d.clusters,
    provenance: uniqueProvenance(pieces),
    notes: d.notes,
  };
}

function upstreamOutcome(clusters: readonly ClusterAnswer[], fallback: Outcome): Outcome {
  if (clusters.length > 0 && clusters.every((c) => c.name === 'BlackHoleCluster')) return 'blackhole';
  if (clusters.length > 0 && clusters.every((c) => /^(Inbound)?PassthroughCluster$/.test(c.name))) return 'passthrough';
  return fallback;
}

const targetsText = (targets: readonly WeightedTarget[]): string =>
  targets.map((t) => (targets.length > 1 ? `${t.name} (${t.weight}%)` : t.name)).join(', ');

function upstream(d: Draft, targets: WeightedTarget[], resources: ProxyResources, originalDst: string): void {
  d.clusters = targets.map((t) => clusterAnswer(t, resources, originalDst));
  for (const c of d.clusters)
    if (!c.found) d.notes.push(`cluster ${c.name} is not served to this proxy: Envoy answers 503 (no cluster)`);
}

export function explain(resources: ProxyResources, req: ExplainRequest): Explanation {
  const d: Draft = { notes: [], clusters: [], rest: {} };
  const destinationIp = req.destinationIp ?? (isIp(req.host) ? req.host : undefined);
  if (destinationIp === undefined && req.direction === 'outbound')
    d.notes.push(`the IP of ${req.host} is not known: only wildcard-address listeners can match`);
  const originalDst = `${destinationIp ?? req.host}:${req.port}`;

  const choice = matchListener([...resources.listeners.values()], { ...req, destinationIp });
  if (!choice.listener) {
    d.outcome = 'no_listener';
    d.summary = `no listener takes a connection to ${originalDst}: ${choice.why.join('; ')}`;
    return finish(req, d);
  }
  const listener = choice.listener;
  d.rest.listener = { name: str(listener.name) ?? '', why: choice.why };

  let hcm: JsonObject | undefined;
  const api = obj(listener.api_listener);
  if (api) {
    hcm = obj(api.api_listener);
  } else {
    const chain = chooseChain(listener, req, destinationIp, d);
    if (!chain) return finish(req, d);
    const network = terminalFilter(chain);
    const chainName = chainLabel(d.rest.filterChain);
    const terminatesTls = chain.transport_socket !== undefined;
    if (terminatesTls && !req.tls)
      return protocolError(req, d, `filter chain ${chainName} terminates TLS: a plaintext client fails the handshake`);
    if (network.kind === 'tcp') {
      d.rest.network = 'tcp';
      const targets = tcpProxyTargets(network.tcpProxy);
      upstream(d, targets, resources, originalDst);
      d.outcome = upstreamOutcome(d.clusters, 'tcp_proxy');
      d.summary = `tcp_proxy of filter chain ${chainName} on ${d.rest.listener.name} → ${targetsText(targets)}`;
      return finish(req, d);
    }
    if (network.kind === 'http' && req.tls && !terminatesTls)
      return protocolError(
        req,
        d,
        `TLS reaches the HTTP connection manager of filter chain ${chainName}, which does not terminate TLS: the request fails to decode`,
      );
    if (network.kind === 'http' && req.protocol === 'tcp')
      return protocolError(
        req,
        d,
        `a client that does not speak HTTP reaches the HTTP connection manager of filter chain ${chainName}: the connection fails to decode`,
      );
    if (network.kind === 'other') {
      d.outcome = 'unsupported';
      d.summary = `filter chain ends in ${network.names.join(', ')}, which explain does not follow`;
      return finish(req, d);
    }
    hcm = network.hcm;
  }
  d.rest.network = 'http';
  explainHttp(hcm ?? {}, resources, req, originalDst, d);
  return finish(req, d);
}

const chainLabel = (fc: FilterChainAnswer | undefined): string =>
  fc?.name ?? (fc?.index !== undefined ? `#${fc.index}` : 'default_filter_chain');

/** Istio's simulation calls these protocol errors: the bytes the client sends are not what the chain expects. */
function protocolError(req: ExplainRequest, d: Draft, summary: string): Explanation {
  d.outcome = 'protocol_error';
  d.summary = summary;
  return finish(req, d);
}

function chooseChain(
  listener: JsonObject,
  req: ExplainRequest,
  destinationIp: string | undefined,
  d: Draft,
): JsonObject | undefined {
  const { view, notes } = detectConnection(listener, req, destinationIp);
  d.notes.push(...notes);
  if (listener.filter_chain_matcher !== undefined)
    d.notes.push('the listener has a filter_chain_matcher, which explain does not evaluate: filter_chain_match used');
  const chains = objects(listener.filter_chains);
  const picked = matchFilterChain(chains, view);
  const name = str(d.rest.listener?.name) ?? '';
  if (picked.chain && picked.index !== undefined) {
    d.rest.filterChain = chainAnswer(picked.chain, picked.index, picked.why);
    return picked.chain;
  }
  const fallback = obj(listener.default_filter_chain);
  if (fallback) {
    d.rest.filterChain = chainAnswer(fallback, undefined, [
      ...picked.why,
      'no filter chain matches: the listener’s default_filter_chain takes the connection',
    ]);
    return fallback;
  }
  d.outcome = 'no_filter_chain';
  d.summary = `no filter chain of ${name} matches and it has no default_filter_chain: Envoy closes the connection`;
  d.notes.push(...picked.why);
  return undefined;
}

function chainAnswer(chain: JsonObject, index: number | undefined, why: string[]): FilterChainAnswer {
  const name = str(chain.name);
  return {
    ...(name !== undefined ? { name } : {}),
    ...(index !== undefined ? { index } : {}),
    isDefault: index === undefined,
    match: matchOf(chain),
    why,
    provenance: provenanceOf(chain.metadata),
  };
}

function explainHttp(
  hcm: JsonObject,
  resources: ProxyResources,
  req: ExplainRequest,
  originalDst: string,
  d: Draft,
): void {
  d.rest.httpFilters = httpFilters(hcm);
  const rcRef = routeConfigOf(hcm);
  if (!rcRef) {
    d.outcome = 'unsupported';
    d.summary = 'the HTTP connection manager has neither RDS nor an inline route config';
    return;
  }
  d.rest.routeConfig = { name: rcRef.name, source: rcRef.source };
  const rc = rcRef.source === 'inline' ? rcRef.config : resources.routes.get(rcRef.name);
  if (!rc) {
    d.outcome = 'not_found';
    d.status = 404;
    d.summary = `route config ${rcRef.name} is not served to this proxy: Envoy waits for it, then answers 404`;
    return;
  }
  const authority = req.headers[':authority'] ?? req.headers.host ?? defaultAuthority(req);
  const host = hostForMatching(authority, rc.ignore_port_in_host_matching === true || hcmStripsPort(hcm));
  const vhMatch = matchVirtualHost(virtualHostsOf(rc), host);
  if (!vhMatch) {
    d.outcome = 'not_found';
    d.status = 404;
    d.summary = `404: no virtual host of route config ${rcRef.name} matches ${JSON.stringify(host)}`;
    return;
  }
  const vh = vhMatch.virtualHost;
  const routes = objects(vh.routes);
  const vhName = str(vh.name) ?? '';
  d.rest.virtualHost = {
    name: vhName,
    domains: strings(vh.domains),
    matchedDomain: vhMatch.domain,
    authority: host,
    why: `${vhMatch.kind} domain ${JSON.stringify(vhMatch.domain)} is the best match for ${JSON.stringify(host)}`,
    provenance: uniqueProvenance([provenanceOf(vh.metadata), ...routes.map((r) => provenanceOf(r.metadata))]),
  } satisfies VirtualHostAnswer;
  if (str(vh.require_tls) === 'ALL' && !req.tls) {
    d.outcome = 'redirect';
    d.status = 301;
    d.summary = `301 to https: virtual host ${vhName} requires TLS for all requests`;
    return;
  }
  if (str(vh.require_tls) === 'EXTERNAL_ONLY')
    d.notes.push(`virtual host ${vhName} requires TLS for external requests`);
  const path = normalizeRequestPath(hcm, req.path);
  if (path !== req.path)
    d.notes.push(
      `the connection manager normalizes the path ${JSON.stringify(req.path)} to ${JSON.stringify(path)} before routing`,
    );
  const view = {
    method: req.method,
    path,
    authority,
    scheme: req.tls ? ('https' as const) : ('http' as const),
    headers: req.headers,
  };
  const found = firstMatchingRoute(routes, view);
  d.rest.skippedRoutes = found.skipped.map((s) => {
    const name = str(s.route.name);
    return { index: s.index, ...(name !== undefined ? { name } : {}), reason: s.reason };
  });
  if (!found.matched) {
    d.outcome = 'not_found';
    d.status = 404;
    d.summary = `404: no route of virtual host ${vhName} matches ${req.method} ${path}`;
    return;
  }
  const { route, index, why, notes } = found.matched;
  d.notes.push(...notes);
  const name = str(route.name);
  const action = obj(route.route)
    ? 'route'
    : obj(route.redirect)
      ? 'redirect'
      : obj(route.direct_response)
        ? 'direct_response'
        : 'other';
  d.rest.route = {
    index,
    ...(name !== undefined ? { name } : {}),
    match: obj(route.match) ?? {},
    why,
    action,
    provenance: provenanceOf(route.metadata),
  } satisfies RouteAnswer;
  const by = d.rest.route.provenance.map(provenanceLabel).join(', ');
  const where = `route ${name ?? `#${index}`} of virtual host ${vhName}${by ? ` (from ${by})` : ''}`;
  if (action === 'redirect') {
    const r = obj(route.redirect) ?? {};
    d.outcome = 'redirect';
    d.status = REDIRECT_STATUS[str(r.response_code) ?? 'MOVED_PERMANENTLY'] ?? 301;
    d.summary = `${d.status} redirect by ${where}`;
    return;
  }
  if (action === 'direct_response') {
    const r = obj(route.direct_response) ?? {};
    d.outcome = 'direct_response';
    d.status = typeof r.status === 'number' ? r.status : 200;
    d.summary = `direct response ${d.status} by ${where}`;
    return;
  }
  if (action === 'other') {
    d.outcome = 'unsupported';
    d.summary = `${where} has an action explain does not follow`;
    return;
  }
  const ra = obj(route.route) ?? {};
  if (str(ra.cluster_header) !== undefined)
    d.notes.push(`the cluster is named by request header ${String(ra.cluster_header)}`);
  const targets = weightedTargets(ra.cluster, ra.weighted_clusters);
  upstream(d, targets, resources, originalDst);
  d.outcome = upstreamOutcome(d.clusters, 'routed');
  d.summary = `${where} → ${targetsText(targets)}`;
}

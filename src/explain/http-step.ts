/**
 * The HTTP half of `explain`: from an HTTP connection manager to the route config, the virtual host
 * (by the authority), the first matching route (and why each earlier one did not match) and its
 * action: clusters with weights, a redirect or a direct response. Pure.
 */
import { upstream, upstreamOutcome, targetsText, type Draft } from './draft.js';
import { obj, objects, str, strings, type JsonObject } from './json.js';
import { hcmStripsPort, httpFilters, routeConfigOf, weightedTargets } from './network-filters.js';
import { normalizeRequestPath } from './path-normalize.js';
import { perFilterConfigs, withPerRouteConfig } from './per-filter-config.js';
import { provenanceLabel, provenanceOf, uniqueProvenance } from './provenance.js';
import { firstMatchingRoute } from './route-match.js';
import type { ExplainRequest, ProxyResources, RouteAnswer, VirtualHostAnswer } from './types.js';
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

export function explainHttp(
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
  d.rest.httpFilters = withPerRouteConfig(d.rest.httpFilters, perFilterConfigs(vh, route));
  routeAction(d, route, index, why, vhName, resources, originalDst);
  const fault = d.rest.httpFilters.find((f) => f.name === 'envoy.filters.http.fault')?.perRoute;
  if (fault && d.outcome === 'routed') d.summary = `${d.summary ?? ''}; the fault filter ${fault}`;
}

/** The matched route's action: its clusters with weights, a redirect or a direct response. */
function routeAction(
  d: Draft,
  route: JsonObject,
  index: number,
  why: string[],
  vhName: string,
  resources: ProxyResources,
  originalDst: string,
): void {
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

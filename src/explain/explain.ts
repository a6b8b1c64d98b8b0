/**
 * `explain`: where a request from a proxy goes, and why — listener, filter chain, HTTP filters,
 * route config, virtual host, route (and why earlier routes did not match), clusters with weights
 * and endpoints, and the Istio objects behind each piece. It reads only the proxy's decoded
 * resources (no store, no Node built-ins), so the CLI, the API and a Worker answer the same. This
 * file follows the connection (listener, filter chain, TCP proxy); http-step.ts the HTTP request. Pure.
 */
import { detectConnection } from './detection.js';
import { finish, protocolError, targetsText, upstream, upstreamOutcome, type Draft } from './draft.js';
import { matchFilterChain, matchOf } from './filter-chain-match.js';
import { explainHttp } from './http-step.js';
import { isIp } from './ip.js';
import { obj, objects, str, type JsonObject } from './json.js';
import { matchListener } from './listener-match.js';
import { tcpProxyTargets, terminalFilter } from './network-filters.js';
import { provenanceOf } from './provenance.js';
import type { ExplainRequest, Explanation, FilterChainAnswer, ProxyResources } from './types.js';

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

/**
 * VirtualService http fields istiod translates and meshsnap once warned about as unknown: the
 * retry policy's `retryIgnorePreviousHosts` and `backoff` (istiod's retry.ConvertPolicy), a
 * match's `statPrefix` (the route's stat_prefix, route.go), CORS `unmatchedPreflights`
 * (forwardNotMatchingPreflights). Checked from YAML to what a sidecar is served.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileMesh, knownRoutes, knownVirtualService } from './scope-mesh.js';

type Json = Record<string, unknown>;

const vs = knownVirtualService;

/** The routes of known's virtual host on port 80, as served. */
function routes(http: string): { routes: Json[]; diagnostics: string[] } {
  const result = compileMesh(vs(http));
  return {
    routes: knownRoutes(result),
    diagnostics: result.diagnostics.filter((d) => d.severity !== 'info').map((d) => `${d.code} ${d.field}`),
  };
}

test('retries: retryIgnorePreviousHosts false drops the previous-hosts predicate, true keeps it; backoff is the base interval', () => {
  const { routes: off, diagnostics } = routes(`  - route: [{destination: {host: known, port: {number: 80}}}]
    retries: {attempts: 3, retryIgnorePreviousHosts: false, backoff: 250ms}`);
  assert.deepEqual(diagnostics, []);
  const policy = (off[0]?.route as Json).retry_policy as Json;
  assert.equal(policy.retry_host_predicate, undefined);
  assert.deepEqual(policy.retry_back_off, { base_interval: '0.25s' });
  const { routes: on } = routes(`  - route: [{destination: {host: known, port: {number: 80}}}]
    retries: {attempts: 3, retryIgnorePreviousHosts: true}`);
  const kept = (on[0]?.route as Json).retry_policy as Json;
  assert.deepEqual(
    (kept.retry_host_predicate as Json[]).map((p) => p.name),
    ['envoy.retry_host_predicates.previous_hosts'],
  );
  assert.equal(kept.retry_back_off, undefined);
});

test("a match's statPrefix is the route's stat_prefix", () => {
  const { routes: out, diagnostics } = routes(`  - match: [{uri: {prefix: /a}, statPrefix: known-a}]
    route: [{destination: {host: known, port: {number: 80}}}]
  - route: [{destination: {host: known, port: {number: 80}}}]`);
  assert.deepEqual(diagnostics, []);
  assert.deepEqual(
    out.map((r) => r.stat_prefix ?? ''),
    ['known-a', ''],
  );
});

test('CORS unmatchedPreflights: IGNORE stops forwarding unmatched preflights; FORWARD and unset forward them', () => {
  const forward = (value: string) => {
    const { routes: out, diagnostics } = routes(`  - route: [{destination: {host: known, port: {number: 80}}}]
    corsPolicy: {allowOrigins: [{exact: https://a.example}]${value ? `, unmatchedPreflights: ${value}` : ''}}`);
    assert.deepEqual(diagnostics, []);
    const cors = (out[0]?.typed_per_filter_config as Json)['envoy.filters.http.cors'] as Json;
    return cors.forward_not_matching_preflights;
  };
  assert.equal(forward('IGNORE'), false);
  assert.equal(forward('FORWARD'), true);
  assert.equal(forward(''), true);
});

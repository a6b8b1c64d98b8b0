/**
 * A Sidecar's `outboundTrafficPolicy.egressProxy`: under ALLOW_ANY, traffic to unknown destinations
 * goes to the proxy's outbound cluster instead of PassthroughCluster (istiod: the allow_any virtual
 * host of buildCatchAllVirtualHost and buildOutboundCatchAllNetworkFiltersOnly, both through
 * GetDestinationCluster(egressProxy, nil, 0)).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileMesh, proxy, sidecar, view } from './scope-mesh.js';

const EGRESS = 'outbound|443|v1|istio-egressgateway.istio-system.svc.cluster.local';
const GATEWAY = `apiVersion: v1
kind: Service
metadata: {name: istio-egressgateway, namespace: istio-system}
spec: {clusterIP: 2.0.0.9, selector: {istio: egressgateway}, ports: [{port: 443, name: tls}]}
---
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: egressgateway, namespace: istio-system}
spec: {host: istio-egressgateway.istio-system.svc.cluster.local, subsets: [{name: v1, labels: {version: v1}}]}`;
const withProxy = (mode = 'ALLOW_ANY') =>
  sidecar(
    'default',
    `{outboundTrafficPolicy: {mode: ${mode}, egressProxy: {host: istio-egressgateway.istio-system.svc.cluster.local, subset: v1, port: {number: 443}}}}`,
  );

test('ALLOW_ANY with egressProxy: allow_any routes, virtualOutbound and the port listeners fall through to the proxy cluster', () => {
  const result = compileMesh(GATEWAY, withProxy());
  const v = view(result, proxy('default'));
  assert.equal(v.routes['80']?.allow_any, EGRESS);
  assert.equal(v.routes['8080']?.allow_any, EGRESS);
  const virtualOutbound = JSON.stringify(v.resources.listeners.get('virtualOutbound'));
  assert.match(virtualOutbound, new RegExp(`"cluster":"${EGRESS.replace(/\|/g, '\\|')}"`));
  for (const [name, l] of v.resources.listeners)
    if (name !== 'virtualInbound') assert.doesNotMatch(JSON.stringify(l), /PassthroughCluster/, name);
  // Applied, so no longer reported.
  assert.deepEqual(
    result.diagnostics.filter((d) => d.code === 'unsupported-sidecar-field'),
    [],
  );
  // Its services are the full view's; only the fallthrough differs, so it is a scope of its own.
  assert.ok(v.clusters.includes(EGRESS));
  assert.deepEqual(v.clusters, view(result, proxy('not-default')).clusters);
  assert.notEqual(v.classId, view(result, proxy('not-default')).classId);
  const classes = result.snapshot.content.classes;
  assert.notEqual(
    classes.find((c) => c.id === 'sidecar/default/_')?.groups[2],
    classes.find((c) => c.id === 'sidecar/not-default/_')?.groups[2],
  );
});

test('namespaces without the egressProxy keep PassthroughCluster', () => {
  const v = view(compileMesh(GATEWAY, withProxy()), proxy('not-default'));
  assert.equal(v.routes['80']?.allow_any, 'PassthroughCluster');
  assert.match(JSON.stringify(v.resources.listeners.get('virtualOutbound')), /"cluster":"PassthroughCluster"/);
});

test('REGISTRY_ONLY with egressProxy is refused by validation, as istiod: unknown destinations stay blocked', () => {
  const result = compileMesh(GATEWAY, withProxy('REGISTRY_ONLY'));
  assert.ok(
    result.diagnostics.some((d) => d.field === 'spec.outboundTrafficPolicy.egressProxy' && d.severity === 'error'),
  );
  const v = view(result, proxy('default'));
  assert.doesNotMatch(JSON.stringify([...v.resources.listeners.values()]), new RegExp(EGRESS.replace(/\|/g, '\\|')));
});

test('an egressProxy the sidecar cannot reach (host not imported, no such port or subset): BlackHoleCluster, with a warning', () => {
  const host = 'host: istio-egressgateway.istio-system.svc.cluster.local';
  const cases: [egress: string, egressProxy: string, why: RegExp][] = [
    ['egress: [{hosts: ["./*"]}], ', `{${host}, subset: v1, port: {number: 443}}`, /no visible service of that host/],
    ['', `{${host}, subset: v1, port: {number: 8443}}`, /the service has no port 8443/],
    ['', `{${host}, subset: v2, port: {number: 443}}`, /no subset v2/],
  ];
  for (const [egress, egressProxy, why] of cases) {
    const spec = `{${egress}outboundTrafficPolicy: {mode: ALLOW_ANY, egressProxy: ${egressProxy}}}`;
    const result = compileMesh(GATEWAY, sidecar('default', spec));
    const v = view(result, proxy('default'));
    assert.equal(v.routes['80']?.allow_any, 'BlackHoleCluster', spec);
    assert.match(JSON.stringify(v.resources.listeners.get('virtualOutbound')), /"cluster":"BlackHoleCluster"/);
    const warning = result.diagnostics.find((d) => d.code === 'unknown-egress-proxy');
    assert.match(warning?.message ?? '', why, spec);
  }
});

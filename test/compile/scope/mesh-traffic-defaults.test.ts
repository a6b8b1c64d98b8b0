/**
 * Mesh config fields that shape every cluster, from a MeshConfig document to what a sidecar is
 * served: `h2UpgradePolicy` (istiod's shouldH2Upgrade), `tcpKeepalive` (applyTCPKeepalive: the
 * mesh's, a rule's attributes over it), `defaultTrafficPolicy` (applyDefaultTrafficPolicy: whole
 * connectionPool / outlierDetection blocks where the rule leaves them unset, outbound and inbound;
 * not for proxyless gRPC, as istiod's grpcgen) and `localityLbSetting` (GetEffectiveLbSetting: the
 * rule's, else the mesh's).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { served } from '../../helpers/mesh.js';
import { compileMesh, proxy, view, WEB } from './scope-mesh.js';

type Json = Record<string, unknown>;

const mesh = (spec: string) => `apiVersion: meshsnap.dev/v1alpha1
kind: MeshConfig
metadata: {name: mesh}
spec: ${spec}`;

const rule = (host: string, spec: string) => `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: ${host}, namespace: default}
spec:
  host: ${host}
${spec}`;

function compiled(...docs: string[]) {
  const result = compileMesh(WEB, ...docs);
  const v = view(result, proxy('default', { app: 'web' }));
  return {
    result,
    cluster: (name: string) => {
      const c = v.resources.clusters.get(name) as Json | undefined;
      assert.ok(c, `cluster ${name}`);
      return c;
    },
    diagnostics: result.diagnostics
      .filter((d) => d.severity !== 'info' && d.code !== 'subset-no-endpoints')
      .map((d) => `${d.severity} ${d.code} ${d.field}`),
  };
}

const KNOWN = 'known.default.svc.cluster.local';
const WEB_HOST = 'web.default.svc.cluster.local';
const upstream = (c: Json): Json | undefined =>
  (c.typed_extension_protocol_options as Json | undefined)?.[
    'envoy.extensions.upstreams.http.v3.HttpProtocolOptions'
  ] as Json | undefined;
const limits = (c: Json) => ((c.circuit_breakers as Json).thresholds as Json[])[0] as Json;

test('h2UpgradePolicy UPGRADE: HTTP ports speak HTTP/2 upstream; a rule says otherwise, sniffed ports keep the client protocol', () => {
  const { cluster, diagnostics } = compiled(
    mesh('{h2UpgradePolicy: UPGRADE}'),
    rule('alt-known', '  trafficPolicy: {connectionPool: {http: {h2UpgradePolicy: DO_NOT_UPGRADE}}}'),
    rule(
      'not-default.not-default.svc.cluster.local',
      '  trafficPolicy: {connectionPool: {http: {useClientProtocol: true}}}',
    ),
  );
  assert.deepEqual(diagnostics, []);
  assert.deepEqual(upstream(cluster(`outbound|80||${KNOWN}`))?.explicit_http_config, { http2_protocol_options: {} });
  assert.equal(upstream(cluster('outbound|80||alt-known.default.svc.cluster.local')), undefined);
  assert.ok(
    upstream(cluster('outbound|80||not-default.not-default.svc.cluster.local'))?.use_downstream_protocol_config,
  );
  assert.ok(upstream(cluster(`outbound|81||${WEB_HOST}`))?.use_downstream_protocol_config === undefined);
  assert.equal(upstream(cluster(`outbound|81||${WEB_HOST}`))?.explicit_http_config, undefined);
  // Without it (DO_NOT_UPGRADE, the default) nothing is upgraded.
  assert.equal(upstream(compiled().cluster(`outbound|80||${KNOWN}`)), undefined);
});

test("tcpKeepalive: on every cluster, inbound too; a rule's pool overrides attribute by attribute", () => {
  const { cluster, diagnostics } = compiled(
    mesh('{tcpKeepalive: {probes: 3, time: 600s, interval: 75s}}'),
    rule('alt-known', '  trafficPolicy: {connectionPool: {tcp: {tcpKeepalive: {time: 30s}}}}'),
  );
  assert.deepEqual(diagnostics, []);
  const ka = (c: Json) => (c.upstream_connection_options as Json | undefined)?.tcp_keepalive;
  assert.deepEqual(ka(cluster(`outbound|80||${KNOWN}`)), {
    keepalive_probes: 3,
    keepalive_time: 600,
    keepalive_interval: 75,
  });
  assert.deepEqual(ka(cluster('outbound|80||alt-known.default.svc.cluster.local')), {
    keepalive_probes: 3,
    keepalive_time: 30,
    keepalive_interval: 75,
  });
  assert.deepEqual(ka(cluster('inbound|9080||')), { keepalive_probes: 3, keepalive_time: 600, keepalive_interval: 75 });
});

test('defaultTrafficPolicy: whole blocks under the rule, outbound and inbound, port-level and subsets as istiod merges them', () => {
  const { cluster, diagnostics, result } = compiled(
    mesh(`
  defaultTrafficPolicy:
    connectionPool: {tcp: {maxConnections: 100}, http: {http2MaxRequests: 200}}
    outlierDetection: {consecutive5xxErrors: 7, interval: 10s}`),
    rule(
      'alt-known',
      `  trafficPolicy:
    connectionPool: {http: {http1MaxPendingRequests: 5}}
    portLevelSettings:
    - port: {number: 8080}
      outlierDetection: {consecutive5xxErrors: 1}
  subsets:
  - name: v1
    labels: {version: v1}
    trafficPolicy: {connectionPool: {tcp: {maxConnections: 9}}}`,
    ),
  );
  assert.deepEqual(diagnostics, []);
  // No rule: both blocks from the mesh.
  const plain = cluster(`outbound|80||${KNOWN}`);
  assert.equal(limits(plain).max_connections, 100);
  assert.equal(limits(plain).max_requests, 200);
  assert.equal((plain.outlier_detection as Json).consecutive_5xx, 7);
  // The rule's pool is whole (the mesh's maxConnections does not leak in); its missing outlier block is the mesh's.
  const alt = cluster('outbound|80||alt-known.default.svc.cluster.local');
  assert.equal(limits(alt).max_pending_requests, 5);
  assert.equal(limits(alt).max_connections, 4294967295);
  assert.equal((alt.outlier_detection as Json).consecutive_5xx, 7);
  // A port-level policy replaces the rule's: the mesh fills the pool it leaves unset.
  const portLevel = cluster('outbound|8080||alt-known.default.svc.cluster.local');
  assert.equal(limits(portLevel).max_connections, 100);
  assert.equal((portLevel.outlier_detection as Json).consecutive_5xx, 1);
  // A subset's own pool over the defaulted policy; the outlier block stays the mesh's.
  const v1 = cluster('outbound|80|v1|alt-known.default.svc.cluster.local');
  assert.equal(limits(v1).max_connections, 9);
  assert.equal((v1.outlier_detection as Json).consecutive_5xx, 7);
  // Inbound: the mesh's pool where no rule sets one.
  assert.equal(limits(cluster('inbound|9080||')).max_connections, 100);
  // Proxyless gRPC clients: istiod's grpcgen applies no mesh defaults.
  const grpc = served(result, {
    id: 'sidecar~10.1.0.2~grpc-client.default~default.svc.cluster.local',
    metadata: { NAMESPACE: 'default', GENERATOR: 'grpc' },
  }).resources.clusters.get(`outbound|80||${KNOWN}`) as Json;
  assert.ok(grpc, 'the proxyless client has the cluster');
  assert.equal(grpc.outlier_detection, undefined);
});

test("localityLbSetting: the mesh's where the rule sets none (failover weights need outlier detection); a rule's disabled one wins", () => {
  const { cluster, diagnostics } = compiled(
    mesh(`
  localityLbSetting: {enabled: true, failover: [{from: us-east, to: us-west}]}
  defaultTrafficPolicy: {outlierDetection: {consecutive5xxErrors: 3}}`),
    rule('alt-known', '  trafficPolicy: {loadBalancer: {localityLbSetting: {enabled: false}}}'),
  );
  assert.deepEqual(diagnostics, []);
  assert.deepEqual((cluster(`outbound|80||${KNOWN}`).common_lb_config as Json).locality_weighted_lb_config, {});
  assert.equal(
    (cluster('outbound|80||alt-known.default.svc.cluster.local').common_lb_config as Json).locality_weighted_lb_config,
    undefined,
  );
});

test('the mesh fields are validated as istiod (h2UpgradePolicy values, a default pool that sets nothing)', () => {
  const { diagnostics } = compiled(
    mesh('{h2UpgradePolicy: SOMETIMES, defaultTrafficPolicy: {connectionPool: {}}, tcpKeepalive: {time: soon}}'),
  );
  assert.deepEqual(diagnostics.sort(), [
    'error invalid-field spec.h2UpgradePolicy',
    'error invalid-field spec.tcpKeepalive.time',
    'error missing-field spec.defaultTrafficPolicy.connectionPool',
  ]);
});

/**
 * MeshConfig `inboundTrafficPolicy.mode`, as istiod turns it into xDS (pilot/pkg/networking/core/
 * cluster.go buildInboundClustersFromServiceInstances, cluster_builder.go buildInboundCluster):
 * PASSTHROUGH (the default) sends inbound traffic to the original destination through an
 * ORIGINAL_DST cluster bound to 127.0.0.6; LOCALHOST to 127.0.0.1 through a STATIC cluster without
 * the bind address. A Sidecar's ingress listeners are not affected. From the istio ConfigMap to what
 * a sidecar is served.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileTexts } from '../../src/pipeline.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { MESH_YAML } from '../helpers/gateway-sim.js';
import { served } from '../helpers/mesh.js';
import { compile, meshConfigMap, SIDECAR, WORKLOADS, type Json } from '../helpers/mesh-config-views.js';

const inboundCluster = (result: ReturnType<typeof compile>, port = 8000): Json => {
  assert.deepEqual(
    result.diagnostics.filter((d) => d.severity !== 'info'),
    [],
  );
  const cluster = served(result, SIDECAR).resources.clusters.get(`inbound|${port}||`) as Json | undefined;
  assert.ok(cluster, `inbound|${port}|| is served`);
  return cluster;
};

const shape = (c: Json) => ({
  type: c.type,
  lb_policy: c.lb_policy,
  endpoints: c.load_assignment?.endpoints?.flatMap((l: Json) =>
    l.lb_endpoints.map(
      (e: Json) => `${e.endpoint.address.socket_address.address}:${e.endpoint.address.socket_address.port_value}`,
    ),
  ),
  bind: c.upstream_bind_config?.source_address?.address,
  cleanup: c.cleanup_interval !== undefined,
});

const PASSTHROUGH = {
  type: 'ORIGINAL_DST',
  lb_policy: 'CLUSTER_PROVIDED',
  endpoints: undefined,
  bind: '127.0.0.6',
  cleanup: true,
};

test('PASSTHROUGH (unset or set): the original destination, from 127.0.0.6', () => {
  const unset = inboundCluster(compile());
  assert.deepEqual(shape(unset), PASSTHROUGH);
  assert.deepEqual(inboundCluster(compile('inboundTrafficPolicy: {mode: PASSTHROUGH}')), unset);
});

test('LOCALHOST: a STATIC cluster to 127.0.0.1 on the target port, no passthrough bind address', () => {
  const c = inboundCluster(compile('inboundTrafficPolicy: {mode: LOCALHOST}'));
  assert.deepEqual(shape(c), {
    type: 'STATIC',
    lb_policy: undefined,
    endpoints: ['127.0.0.1:8000'],
    bind: undefined,
    cleanup: false,
  });
  assert.equal(c.load_assignment.cluster_name, 'inbound|8000||');
});

test("LOCALHOST leaves a Sidecar's ingress listeners as they are (istiod builds them from the Sidecar)", () => {
  const sidecar = `---
apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: web, namespace: default}
spec:
  workloadSelector: {labels: {app: web}}
  ingress: [{port: {number: 8000, protocol: HTTP, name: http}}]
`;
  const result = compileTexts(
    [
      {
        file: 'mesh.yaml',
        text: MESH_YAML + WORKLOADS + sidecar + meshConfigMap('inboundTrafficPolicy: {mode: LOCALHOST}'),
      },
    ],
    { hasher: nodeSha256Hex },
  );
  assert.deepEqual(shape(inboundCluster(result)), PASSTHROUGH);
});

test('inboundTrafficPolicy is validated: an unknown mode is an error, an unknown key a warning', () => {
  const bad = compile('inboundTrafficPolicy: {mode: LOCAL}');
  assert.ok(
    bad.diagnostics.some((d) => d.severity === 'error' && d.field === 'data.mesh.inboundTrafficPolicy.mode'),
    JSON.stringify(bad.diagnostics),
  );
  const unknown = compile('inboundTrafficPolicy: {mode: LOCALHOST, bind: x}');
  assert.ok(
    unknown.diagnostics.some((d) => d.code === 'unknown-field' && d.field === 'data.mesh.inboundTrafficPolicy.bind'),
  );
});

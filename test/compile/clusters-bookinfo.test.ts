/** CDS/EDS on the real bookinfo cluster state and Istio's sample DestinationRules (inputs → model → translators). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { buildClusters } from '../../src/compile/clusters.js';
import { buildEndpoints } from '../../src/compile/endpoints.js';
import { createContext } from '../../src/compile/index.js';
import { Diagnostics } from '../../src/model/diagnostics.js';
import { loadInputsFromPaths } from '../../src/inputs/files.js';
import { encodeMessage } from '../../src/xds/proto.js';
import { resourceToJson } from '../../src/xds/json.js';
import { TypeName } from '../../src/xds/type-urls.js';
import { BOOKINFO_STATE, ISTIO_SAMPLES } from '../helpers/paths.js';

type J = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const NET = join(ISTIO_SAMPLES, 'bookinfo', 'networking');

async function load(...files: string[]) {
  const inputs = await loadInputsFromPaths([BOOKINFO_STATE, ...files.map((f) => join(NET, f))]);
  const diags = new Diagnostics();
  return createContext(inputs, diags);
}

test('bookinfo + destination-rule-all: subset clusters and their endpoints', async () => {
  const ctx = await load('destination-rule-all.yaml');
  const clusters = buildClusters(ctx, 'sidecar');
  const cla = buildEndpoints(ctx);
  for (const subset of ['v1', 'v2', 'v3']) {
    const name = `outbound|9080|${subset}|reviews.default.svc.cluster.local`;
    const c = resourceToJson(TypeName.Cluster, encodeMessage(TypeName.Cluster, clusters.get(name) ?? {})) as J;
    assert.equal(c.name, name);
    assert.equal(
      c.metadata.filter_metadata.istio.config,
      '/apis/networking.istio.io/v1/namespaces/default/destination-rule/reviews',
    );
    const eps = resourceToJson(
      TypeName.ClusterLoadAssignment,
      encodeMessage(TypeName.ClusterLoadAssignment, cla.get(name) ?? {}),
    ) as J;
    const lbEndpoints = (eps.endpoints ?? []).flatMap((l: J) => l.lb_endpoints);
    assert.equal(lbEndpoints.length, 1, `${name} has the one ${subset} pod`);
    for (const l of eps.endpoints) assert.equal(l.load_balancing_weight, l.lb_endpoints.length);
  }
  // Every EDS cluster has an assignment, and nothing else does.
  const eds = [...clusters.values()]
    .filter((c) => c.eds_cluster_config)
    .map((c) => c.name as string)
    .sort();
  assert.deepEqual(eds, [...cla.keys()].sort());
  // The cluster state runs no details-v2 / ratings-v2 pods: those subsets are kept but reported.
  const empty = ctx.diags.all
    .filter((d) => d.kind === 'DestinationRule')
    .map((d) => `${d.code} ${d.name} ${d.message.split(' ')[1]}`);
  assert.deepEqual(empty.sort(), [
    'subset-no-endpoints details v2',
    'subset-no-endpoints ratings v2',
    'subset-no-endpoints ratings v2-mysql',
    'subset-no-endpoints ratings v2-mysql-vm',
  ]);
});

test('bookinfo + destination-rule-all-mtls: explicit ISTIO_MUTUAL sockets, no auto-mTLS matches', async () => {
  const ctx = await load('destination-rule-all-mtls.yaml');
  const c = resourceToJson(
    TypeName.Cluster,
    encodeMessage(
      TypeName.Cluster,
      buildClusters(ctx, 'sidecar').get('outbound|9080|v2|reviews.default.svc.cluster.local') ?? {},
    ),
  ) as J;
  assert.equal(c.transport_socket_matches, undefined);
  assert.equal(c.transport_socket.typed_config.sni, 'outbound_.9080_.v2_.reviews.default.svc.cluster.local');
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateMesh } from '../../bench/synthetic.js';
import { compile } from '../../src/compile/index.js';
import { buildInputSet } from '../../src/inputs/index.js';
import { decodeMessage, encodeWithProtobufjs, type ClusterLoadAssignment } from '../../src/xds/proto.js';
import { XDS_TYPE_NAME } from '../../src/xds/type-urls.js';
import { countLbEndpoints } from '../../src/xds/wire/scan.js';

const decodedCount = (bytes: Uint8Array): number =>
  ((decodeMessage(XDS_TYPE_NAME.endpoints, bytes) as ClusterLoadAssignment).endpoints ?? []).reduce(
    (n, locality) => n + (locality.lb_endpoints?.length ?? 0),
    0,
  );
const encode = (cla: object): Uint8Array => encodeWithProtobufjs(XDS_TYPE_NAME.endpoints, cla);
const endpoint = (ip: string) => ({
  endpoint: { address: { socket_address: { address: ip, port_value: 9080 } } },
  metadata: { filter_metadata: { istio: { fields: { workload: { string_value: 'w' } } } } },
  load_balancing_weight: { value: 1 },
});

test('countLbEndpoints counts lb_endpoints over every locality, and nothing else', () => {
  const cases: [string, object, number][] = [
    ['no localities', { cluster_name: 'outbound|9080||a.ns.svc.cluster.local' }, 0],
    ['an empty locality', { cluster_name: 'c', endpoints: [{ locality: { zone: 'z' } }] }, 0],
    [
      'three localities, with weights, priorities and policy around them',
      {
        cluster_name: 'c',
        endpoints: [
          {
            locality: { region: 'r', zone: 'a' },
            lb_endpoints: [endpoint('10.0.0.1'), endpoint('10.0.0.2')],
            load_balancing_weight: { value: 2 },
          },
          { locality: { region: 'r', zone: 'b' }, lb_endpoints: [endpoint('10.0.0.3')], priority: 1 },
          { lb_endpoints: [endpoint('10.0.0.4'), endpoint('10.0.0.5'), endpoint('10.0.0.6')] },
        ],
        policy: { overprovisioning_factor: { value: 140 } },
      },
      6,
    ],
  ];
  for (const [what, cla, expected] of cases) {
    const bytes = encode(cla);
    assert.equal(countLbEndpoints(bytes), expected, what);
    assert.equal(countLbEndpoints(bytes), decodedCount(bytes), what);
  }
});

test('countLbEndpoints agrees with a full decode on every assignment of a compiled mesh', () => {
  const { docs } = generateMesh({ services: 60 });
  const { output } = compile(buildInputSet(docs));
  let assignments = 0;
  let endpoints = 0;
  for (const table of output.groups.values())
    for (const cla of table.endpoints.values()) {
      const bytes = encode(cla);
      const n = countLbEndpoints(bytes);
      assert.equal(n, decodedCount(bytes), String((cla as ClusterLoadAssignment).cluster_name));
      assignments++;
      endpoints += n;
    }
  assert.ok(assignments > 60 && endpoints > assignments, `${assignments} assignments, ${endpoints} endpoints`);
});

/**
 * A VM's sidecar (a WorkloadEntry a ServiceEntry selects) and a pod an entry selects, over the
 * relay: placed by their labels in the entry's class and served its inbound listener.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { compileTexts } from '../../src/pipeline.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { XDS_TYPE_URL } from '../../src/xds/type-urls.js';
import { fromBuilt } from './fixtures.js';
import { names, startHarness, type Harness, type Resp } from './protocol-client.js';

const MESH = `apiVersion: v1
kind: Namespace
metadata: { name: vm }
---
apiVersion: networking.istio.io/v1
kind: WorkloadEntry
metadata: { name: mysqldb-vm-1, namespace: vm, labels: { app: mysqldb } }
spec: { address: 10.0.0.50, serviceAccount: mysqldb, ports: { mysql: 3306 } }
---
apiVersion: v1
kind: Pod
metadata: { name: mysqldb-pod-1, namespace: vm, labels: { app: mysqldb } }
spec: { serviceAccountName: mysqldb, containers: [{ name: db, image: x }] }
status: { phase: Running, podIP: 10.244.3.3, podIPs: [{ ip: 10.244.3.3 }], conditions: [{ type: Ready, status: "True" }] }
---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: { name: mysqldb, namespace: vm }
spec:
  hosts: [mysqldb.vm.example]
  addresses: [240.240.0.10]
  location: MESH_INTERNAL
  resolution: STATIC
  ports: [{ number: 3306, name: mysql, protocol: TCP }]
  workloadSelector: { labels: { app: mysqldb } }`;

const sidecarNode = (ip: string, name: string) => ({
  id: `sidecar~${ip}~${name}.vm~vm.svc.cluster.local`,
  metadata: {
    fields: {
      NAMESPACE: { stringValue: 'vm' },
      LABELS: { structValue: { fields: { app: { stringValue: 'mysqldb' } } } },
    },
  },
});

let h: Harness;
before(async () => {
  h = await startHarness();
  const built = compileTexts([{ file: 'vm.yaml', text: MESH }], { hasher: nodeSha256Hex }).snapshot;
  h.xds.setSnapshot(fromBuilt(built, 1));
});
after(() => h.close());

const T = { timeout: 10_000 };

async function inboundOf(node: ReturnType<typeof sidecarNode>): Promise<Resp> {
  const s = h.open();
  s.send({ node, type_url: XDS_TYPE_URL.clusters });
  return s.next();
}

for (const [what, ip, name] of [
  ['a VM sidecar (WorkloadEntry)', '10.0.0.50', 'mysqldb-vm-1'],
  ['a pod', '10.244.3.3', 'mysqldb-pod-1'],
] as const) {
  test(`${what} selected by a ServiceEntry gets the entry's class and inbound cluster`, T, async () => {
    const cds = await inboundOf(sidecarNode(ip, name));
    assert.ok(names(cds).includes('inbound|3306||'), `inbound cluster served: ${names(cds).join(' ')}`);
    assert.ok(names(cds).includes('outbound|3306||mysqldb.vm.example'));
    const status = h.xds.statuses().find((p) => p.nodeId.includes(`~${name}.vm~`));
    assert.equal(status?.classId, 'sidecar/vm/mysqldb.vm.example');
  });
}

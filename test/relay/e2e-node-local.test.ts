/**
 * `internalTrafficPolicy: Local` end to end with the real proxyless client: `meshsnap compile` →
 * store → `meshsnap relay` → @grpc/grpc-js-xds. The echo service (a DaemonSet's, say) has one
 * backend per node; a client says its node in its bootstrap's NODE_NAME metadata, as istio-agent
 * does, and every call of it reaches its own node's backend (istiod's NodeLocal endpoint filter).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ECHO_TARGET, startEchoPerNode, type EchoPerNode } from './echo-per-node.js';

const client = (name: string, nodeName: string) => ({
  id: `sidecar~127.0.0.1~${name}.default~default.svc.cluster.local`,
  metadata: { GENERATOR: 'grpc', NAMESPACE: 'default', NODE_NAME: nodeName },
  locality: {},
});

const NODE_LOCAL_SERVICE = `apiVersion: v1
kind: Service
metadata: { name: echo, namespace: default }
spec:
  clusterIP: 10.96.0.72
  selector: { app: echo }
  internalTrafficPolicy: Local
  ports: [{ name: grpc-echo, port: 7070, targetPort: 7070 }]
`;

describe('internalTrafficPolicy Local end to end with @grpc/grpc-js-xds', { timeout: 120_000 }, () => {
  let mesh: EchoPerNode | undefined;

  before(async () => {
    mesh = await startEchoPerNode([{ name: 'n1' }, { name: 'n2' }], [NODE_LOCAL_SERVICE]);
  });

  after(async () => {
    await mesh?.close();
  });

  test("each client reaches only its own node's backend, placed in its node class", async () => {
    const a = mesh!.client(client('client-a', 'n1'));
    const b = mesh!.client(client('client-b', 'n2'));
    const ra = await a.run(ECHO_TARGET, 50, { deadlineMs: 10_000 });
    assert.deepEqual(ra.errors, {}, JSON.stringify(ra.errorDetails));
    assert.deepEqual(ra.counts, { n1: 50 });
    const rb = await b.run(ECHO_TARGET, 50, { deadlineMs: 10_000 });
    assert.deepEqual(rb.errors, {}, JSON.stringify(rb.errorDetails));
    assert.deepEqual(rb.counts, { n2: 50 });
    assert.equal(await mesh!.classOf('client-a'), 'grpc/default#n1');
    assert.equal(await mesh!.classOf('client-b'), 'grpc/default#n2');
  });
});

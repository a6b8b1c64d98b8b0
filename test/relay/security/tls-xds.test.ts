/**
 * The relay over TLS with real @grpc/grpc-js-xds clients (child processes): a proxy proving its
 * namespace (mTLS SPIFFE certificate, or a service-account token reviewed by a fake TokenReview)
 * gets its config and its RPCs flow; one whose node claims another namespace is refused
 * (PERMISSION_DENIED, recorded with its identity); one without credentials is refused, unless the
 * relay runs --insecure. /debug/proxies and the audit show the identity beside the node id.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { silentLogger } from '../../../src/relay/log.js';
import { startRelay, type Relay } from '../../../src/relay/relay.js';
import type { AuditRecord } from '../../../src/snapshot/audit.js';
import { LocalStore } from '../../../src/snapshot/store/local.js';
import { publishSnapshot } from '../../../src/snapshot/store/publish.js';
import { compileFiles } from '../../helpers/mesh.js';
import { startXdsClientProcess, type ClientNode } from '../client-process.js';
import { echoMeshYaml, ECHO_TARGET } from '../echo-mesh.js';
import { startEchoBackend, type EchoBackend } from '../grpc-backends.js';
import { eventually, tempDir } from '../store-fixture.js';
import { serviceAccountReview } from './stand-ins.js';
import { makeCa, type TestCa } from './pki.js';
import { startTlsXdsClient, type TlsXdsClient } from './tls-client-process.js';

const node = (ns: string, pod = 'client'): ClientNode => ({
  id: `sidecar~127.0.0.1~${pod}.${ns}~${ns}.svc.cluster.local`,
  metadata: { GENERATOR: 'grpc', NAMESPACE: ns },
  locality: { zone: 'z1' },
});

/** A fake TokenReview: `tok-<ns>-<sa>` is that service account, anything else is not authenticated. */
// `/^tok-([a-z]+)-([a-z]+)$/` tokens are the service account their groups name.
const fakeReview = serviceAccountReview(/^tok-([a-z]+)-([a-z]+)$/);

describe('relay over TLS with real grpc-js-xds clients', { timeout: 120_000 }, () => {
  const tmp = tempDir('meshsnap-tls-');
  let ca: TestCa;
  let store: LocalStore;
  let v1: EchoBackend | undefined;
  let v2: EchoBackend | undefined;
  let relay: Relay | undefined;
  let insecureRelay: Relay | undefined;
  const clients: { close(): Promise<void> }[] = [];

  const audit = async (): Promise<AuditRecord[]> => {
    const out: AuditRecord[] = [];
    for await (const r of store.readAudit()) out.push(r);
    return out;
  };

  before(async () => {
    ca = makeCa(tmp.dir);
    v1 = await startEchoBackend('v1');
    v2 = await startEchoBackend('v2');
    const mesh = join(tmp.dir, 'mesh.yaml');
    writeFileSync(mesh, echoMeshYaml({ ports: { v1: v1.port, v2: v2.port }, weights: { v1: 100, v2: 0 } }));
    store = new LocalStore(join(tmp.dir, 'store'));
    await publishSnapshot(store, 'main', compileFiles([mesh]).snapshot, { createdAt: new Date().toISOString() });
    const server = ca.issue('relay', { dns: ['localhost'], ip: ['127.0.0.1'] });
    const common = { store, host: '127.0.0.1', port: 0, httpPort: 0, pollMs: 100, auditFlushMs: 50, log: silentLogger };
    relay = await startRelay({
      ...common,
      relayId: 'tls-relay',
      security: {
        tls: { certFile: server.certFile, keyFile: server.keyFile, clientCaFile: ca.certFile },
        authenticators: [fakeReview],
      },
    });
    insecureRelay = await startRelay({ ...common, relayId: 'plain-relay', security: { insecure: true } });
  });

  after(async () => {
    for (const c of clients) await c.close();
    await relay?.close();
    await insecureRelay?.close();
    await v1?.close();
    await v2?.close();
    tmp.remove();
  });

  const tlsClient = (o: Omit<Parameters<typeof startTlsXdsClient>[0], 'xdsPort' | 'caFile'>): TlsXdsClient => {
    const c = startTlsXdsClient({ xdsPort: relay!.port, caFile: ca.certFile, ...o });
    clients.push(c);
    return c;
  };

  test('a client certificate for its namespace: config served, RPCs flow, identity in /debug/proxies', async () => {
    const cert = ca.issue('client-default', { uri: 'spiffe://cluster.local/ns/default/sa/client' });
    const c = tlsClient({ node: node('default'), certFile: cert.certFile, keyFile: cert.keyFile });
    const r = await c.run(ECHO_TARGET, 5);
    assert.deepEqual(r.counts, { v1: 5 }, `${JSON.stringify(r)}\n${c.stderr().slice(-2000)}`);
    const res = await fetch(`http://127.0.0.1:${relay!.httpPort}/debug/proxies`);
    const body = (await res.json()) as {
      proxies: { nodeId: string; identity?: { principal: string; method: string } }[];
    };
    const mine = body.proxies.find((p) => p.nodeId === node('default').id);
    assert.deepEqual(mine?.identity, { principal: 'spiffe://cluster.local/ns/default/sa/client', method: 'mtls' });
  });

  test('a service-account token (TokenReview) over TLS without a client certificate: config served', async () => {
    const c = tlsClient({ node: node('default', 'tokenclient'), token: 'tok-default-client' });
    const r = await c.run(ECHO_TARGET, 3);
    assert.deepEqual(r.counts, { v1: 3 }, `${JSON.stringify(r)}\n${c.stderr().slice(-2000)}`);
    const records = await eventually(
      async () => {
        const all = await audit();
        return all.some((x) => x.kind === 'ack' && x.nodeId === node('default', 'tokenclient').id) ? all : undefined;
      },
      5000,
      'the token client’s ACKs in the audit',
    );
    const connect = records.find((x) => x.kind === 'connect' && x.nodeId === node('default', 'tokenclient').id);
    assert.equal(connect?.detail?.identity, 'spiffe://cluster.local/ns/default/sa/client');
    const ack = records.find((x) => x.kind === 'ack' && x.nodeId === node('default', 'tokenclient').id);
    assert.deepEqual(ack?.detail, { identity: 'spiffe://cluster.local/ns/default/sa/client' });
  });

  test('a node id claiming another namespace than its certificate: refused, PERMISSION_DENIED recorded', async () => {
    const cert = ca.issue('client-evil', { uri: 'spiffe://cluster.local/ns/evil/sa/client' });
    const c = tlsClient({ node: node('default', 'impostor'), certFile: cert.certFile, keyFile: cert.keyFile });
    const r = await c.run(ECHO_TARGET, 2, 2000);
    assert.deepEqual(r.counts, {}, JSON.stringify(r));
    const rejected = await eventually(async () =>
      (await audit()).find((x) => x.kind === 'rejected' && x.nodeId === node('default', 'impostor').id),
    );
    assert.equal(rejected.detail?.identity, 'spiffe://cluster.local/ns/evil/sa/client');
    assert.match(
      rejected.error ?? '',
      /claims namespace "default" .* authenticated as spiffe:\/\/cluster\.local\/ns\/evil/,
    );
    assert.equal(
      relay!.xds.statuses().some((p) => p.nodeId === node('default', 'impostor').id),
      false,
    );
  });

  test('no credentials over TLS: refused (UNAUTHENTICATED, recorded); a bad token too', async () => {
    for (const [pod, token] of [
      ['anon', undefined],
      ['badtoken', 'forged'],
    ] as const) {
      const c = tlsClient({ node: node('default', pod), ...(token ? { token } : {}) });
      const r = await c.run(ECHO_TARGET, 2, 2000);
      assert.deepEqual(r.counts, {}, `${pod}: ${JSON.stringify(r)}`);
      const rejected = await eventually(async () =>
        (await audit()).find((x) => x.kind === 'rejected' && x.nodeId === node('default', pod).id),
      );
      assert.match(rejected.error ?? '', token ? /authentication failed: .*not authenticated/ : /no credentials/);
    }
  });

  test('--insecure: a plaintext client without credentials gets config; /readyz says INSECURE', async () => {
    const c = startXdsClientProcess(insecureRelay!.port, node('default', 'plain'));
    clients.push(c);
    const r = await c.run(ECHO_TARGET, 3);
    assert.deepEqual(r.counts, { v1: 3 }, JSON.stringify(r));
    const ready = (await (await fetch(`http://127.0.0.1:${insecureRelay!.httpPort}/readyz`)).json()) as {
      security: { transport: string; warning?: string };
    };
    assert.equal(ready.security.transport, 'plaintext');
    assert.match(ready.security.warning ?? '', /^INSECURE/);
    const secure = (await (await fetch(`http://127.0.0.1:${relay!.httpPort}/readyz`)).json()) as {
      security: { transport: string; warning?: string; clientCertificates: boolean };
    };
    assert.equal(secure.security.transport, 'tls');
    assert.equal(secure.security.clientCertificates, true);
    assert.equal(secure.security.warning, undefined);
  });
});

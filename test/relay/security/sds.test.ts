/**
 * SDS for gateway credentials (`kubernetes://<credentialName>`, `…-cacert`) served live from
 * Secrets: a gateway identity allowed to read its namespace's Secrets receives its certificate and
 * key; a proxy of another namespace asking for it is refused (recorded); a same-namespace proxy
 * without that right gets the CA only; updating the Secret pushes a new version (SotW and delta);
 * no stored object — snapshot, audit — ever holds the key. Without Kubernetes, no secrets are served.
 */
import * as grpc from '@grpc/grpc-js';
import { bearerTlsClient } from './bearer-client.js';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { silentLogger } from '../../../src/relay/log.js';
import { startRelay, type Relay } from '../../../src/relay/relay.js';
import { SECRET_TYPE_NAME, SECRET_TYPE_URL } from '../../../src/relay/sds/secret-material.js';
import { MemorySecretSource } from '../../../src/relay/sds/secret-source.js';
import { ADS_SERVICE, SDS_SERVICE } from '../../../src/relay/xds/services.js';
import type { AuditRecord } from '../../../src/snapshot/audit.js';
import { LocalStore } from '../../../src/snapshot/store/local.js';
import { decodeMessage } from '../../../src/xds/proto.js';
import { NODE, TestStream, type Resp } from '../protocol-client.js';
import { eventually, publishSet, tempDir } from '../store-fixture.js';
import { serviceAccountReview, capturingLogger } from './stand-ins.js';
import { makeCa, type Issued, type TestCa } from './pki.js';

// `/^tok-([a-z]+)-([a-z]+)$/` tokens are the service account their groups name.
const review = serviceAccountReview(/^tok-([a-z]+)-([a-z]+)$/);

const GATEWAY = {
  id: 'router~10.244.0.30~istio-ingressgateway-abc.default~default.svc.cluster.local',
  metadata: { fields: { NAMESPACE: { stringValue: 'default' } } },
};
const OTHER_NS = {
  id: 'sidecar~10.244.1.5~web-1.other~other.svc.cluster.local',
  metadata: { fields: { NAMESPACE: { stringValue: 'other' } } },
};

interface DecodedSecret {
  name: string;
  tls_certificate?: { certificate_chain: { inline_bytes: Uint8Array }; private_key: { inline_bytes: Uint8Array } };
  validation_context?: { trusted_ca: { inline_bytes: Uint8Array } };
}
const secretsOf = (r: Resp, delta = false): DecodedSecret[] =>
  r.resources.map(
    (x) => decodeMessage(SECRET_TYPE_NAME, (delta ? x.resource?.value : x.value) ?? new Uint8Array()) as DecodedSecret,
  );
const text = (b: Uint8Array | undefined): string => Buffer.from(b ?? []).toString('utf8');

const { logged, logger: capture } = capturingLogger();

describe('SDS from Kubernetes Secrets', { timeout: 60_000 }, () => {
  const tmp = tempDir('meshsnap-sds-');
  let ca: TestCa;
  let gw1: Issued;
  let gw2: Issued;
  let store: LocalStore;
  const source = new MemorySecretSource();
  let relay: Relay | undefined;
  const clients: grpc.Client[] = [];
  const streams: TestStream[] = [];

  const setSecret = (leaf: Issued, rv: string): void =>
    source.set('default', 'bookinfo-cert', {
      data: { 'tls.crt': leaf.cert, 'tls.key': leaf.key, 'ca.crt': ca.cert },
      revision: `uid-1/${rv}`,
    });

  const open = (token: string, method: string, service = SDS_SERVICE): TestStream => {
    const client = bearerTlsClient(relay!.port, ca.cert, token);
    clients.push(client);
    const s = new TestStream(client, `/${service}/${method}`, method.startsWith('Delta'));
    streams.push(s);
    return s;
  };

  before(async () => {
    ca = makeCa(tmp.dir);
    gw1 = ca.issue('gw1', { dns: ['bookinfo.example.com'] });
    gw2 = ca.issue('gw2', { dns: ['bookinfo.example.com'] });
    setSecret(gw1, '1');
    store = new LocalStore(join(tmp.dir, 'store'));
    await publishSet(store, 'base');
    const server = ca.issue('relay', { dns: ['localhost'], ip: ['127.0.0.1'] });
    relay = await startRelay({
      store,
      host: '127.0.0.1',
      port: 0,
      httpPort: 0,
      pollMs: 100,
      auditFlushMs: 50,
      log: capture,
      secrets: source,
      security: {
        tls: { certFile: server.certFile, keyFile: server.keyFile },
        authenticators: [review],
        // As a SubjectAccessReview would answer with a Role granting the gateway `list secrets`.
        secretAccess: (ns, sa) => Promise.resolve(ns === 'default' && sa === 'ingressgateway'),
      },
    });
  });

  after(async () => {
    for (const s of streams) s.close();
    for (const c of clients) c.close();
    await relay?.close();
    tmp.remove();
  });

  test('the gateway gets its certificate, key and CA; an update pushes a new version (SotW)', async () => {
    const s = open('tok-default-ingressgateway', 'StreamSecrets');
    const names = ['kubernetes://bookinfo-cert', 'kubernetes://bookinfo-cert-cacert'];
    s.send({ node: GATEWAY, type_url: SECRET_TYPE_URL, resource_names: names });
    const first = await s.next(5000);
    const got = secretsOf(first);
    assert.deepEqual(
      got.map((x) => x.name),
      names,
    );
    assert.equal(text(got[0]?.tls_certificate?.certificate_chain.inline_bytes), gw1.cert.toString());
    assert.equal(text(got[0]?.tls_certificate?.private_key.inline_bytes), gw1.key.toString());
    assert.equal(text(got[1]?.validation_context?.trusted_ca.inline_bytes), ca.cert.toString());
    s.send({
      type_url: SECRET_TYPE_URL,
      resource_names: names,
      response_nonce: first.nonce,
      version_info: first.version_info,
    });

    setSecret(gw2, '2');
    const rotated = await s.next(5000);
    assert.notEqual(rotated.version_info, first.version_info);
    assert.equal(text(secretsOf(rotated)[0]?.tls_certificate?.certificate_chain.inline_bytes), gw2.cert.toString());
  });

  test('delta SDS: the subscribed secret, then only what changed', async () => {
    const s = open('tok-default-ingressgateway', 'DeltaSecrets');
    s.send({ node: GATEWAY, type_url: SECRET_TYPE_URL, resource_names_subscribe: ['kubernetes://bookinfo-cert'] });
    const first = await s.next(5000);
    assert.deepEqual(
      first.resources.map((r) => r.name),
      ['kubernetes://bookinfo-cert'],
    );
    s.send({ type_url: SECRET_TYPE_URL, response_nonce: first.nonce });
    setSecret(gw1, '3');
    const next = await s.next(5000);
    assert.deepEqual(
      next.resources.map((r) => r.name),
      ['kubernetes://bookinfo-cert'],
    );
    assert.notEqual(next.resources[0]?.version, first.resources[0]?.version);
    assert.equal(text(secretsOf(next, true)[0]?.tls_certificate?.certificate_chain.inline_bytes), gw1.cert.toString());
  });

  test('a proxy of another namespace asking for the gateway’s secret is refused, and it is logged', async () => {
    const s = open('tok-other-web', 'StreamSecrets');
    s.send({ node: OTHER_NS, type_url: SECRET_TYPE_URL, resource_names: ['kubernetes://default/bookinfo-cert'] });
    const r = await s.next(5000);
    assert.equal(r.resources.length, 0);
    const denied = await eventually(() =>
      logged.find((l) => l.event === 'sds.denied' && l.fields.node === OTHER_NS.id),
    );
    assert.equal(denied.fields.name, 'kubernetes://default/bookinfo-cert');
    assert.equal(denied.fields.reason, 'secret of namespace default, proxy of other');
    assert.equal(denied.fields.identity, 'spiffe://cluster.local/ns/other/sa/web');
    // The stream goes on (the proxy may ask for other names): nothing marks it rejected in the audit.
    const out: AuditRecord[] = [];
    for await (const x of store.readAudit()) out.push(x);
    assert.equal(
      out.some((x) => x.kind === 'rejected' && x.nodeId === OTHER_NS.id),
      false,
    );
  });

  test('a sidecar of the gateway’s namespace without the right to read Secrets gets the CA only (over ADS)', async () => {
    const s = open('tok-default-productpage', 'StreamAggregatedResources', ADS_SERVICE);
    s.send({
      node: NODE.productpage,
      type_url: SECRET_TYPE_URL,
      resource_names: ['kubernetes://bookinfo-cert', 'kubernetes://bookinfo-cert-cacert'],
    });
    const r = await s.next(5000);
    assert.deepEqual(
      secretsOf(r).map((x) => x.name),
      ['kubernetes://bookinfo-cert-cacert'],
    );
  });

  test('no stored object of any version, nor the audit, holds the key', async () => {
    await relay!.audit.flush();
    assert.equal(relay!.audit.pending, 0);
    const files: string[] = [];
    const walk = (dir: string): void => {
      for (const f of readdirSync(dir)) {
        const p = join(dir, f);
        if (statSync(p).isDirectory()) walk(p);
        else files.push(p);
      }
    };
    walk(join(tmp.dir, 'store'));
    assert.ok(files.length > 0);
    const needles = [gw1.key, gw2.key].flatMap((k) => [
      k.toString().split('\n')[1] ?? '',
      k.toString('base64').slice(0, 40),
    ]);
    for (const f of files) {
      const content = readFileSync(f).toString('latin1');
      for (const n of needles) assert.equal(content.includes(n), false, `${f} holds key material`);
    }
  });
});

test(
  'without Kubernetes no secrets are served: SDS is UNIMPLEMENTED, ADS Secret requests get no answer',
  { timeout: 30_000 },
  async (t) => {
    const tmp = tempDir('meshsnap-nosds-');
    t.after(() => tmp.remove());
    const store = new LocalStore(join(tmp.dir, 'store'));
    await publishSet(store, 'base');
    const relay = await startRelay({
      store,
      host: '127.0.0.1',
      port: 0,
      httpPort: 0,
      log: silentLogger,
      security: { insecure: true },
    });
    t.after(() => relay.close());
    const client = new grpc.Client(`127.0.0.1:${relay.port}`, grpc.credentials.createInsecure());
    t.after(() => client.close());
    const sds = new TestStream(client, `/${SDS_SERVICE}/StreamSecrets`, false);
    sds.send({ node: GATEWAY, type_url: SECRET_TYPE_URL, resource_names: ['kubernetes://bookinfo-cert'] });
    const status = await sds.status;
    assert.equal(status.code, grpc.status.UNIMPLEMENTED);
    assert.match(status.details, /no Kubernetes access/);
    const ads = new TestStream(client, `/${ADS_SERVICE}/StreamAggregatedResources`, false);
    t.after(() => ads.close());
    ads.send({ node: NODE.productpage, type_url: SECRET_TYPE_URL, resource_names: ['kubernetes://bookinfo-cert'] });
    await ads.none(300);
    assert.equal(relay.status().security.secrets, 'not served (no Kubernetes access configured)');
  },
);

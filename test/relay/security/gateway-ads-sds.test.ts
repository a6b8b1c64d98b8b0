/**
 * The whole gateway path over one ADS stream, as an Envoy ingress gateway runs it: the router node
 * (authenticated as the gateway's service account over TLS) gets its compiled listener, which names
 * its certificate only as `kubernetes://<credentialName>` with `sds_config: ads`, then asks the same
 * stream for that Secret and receives the certificate and key read live from Kubernetes. The
 * stored snapshot carries the name, never the key.
 */
import * as grpc from '@grpc/grpc-js';
import { bearerTlsClient } from './bearer-client.js';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startRelay, type Relay } from '../../../src/relay/relay.js';
import { SECRET_TYPE_NAME, SECRET_TYPE_URL } from '../../../src/relay/sds/secret-material.js';
import { MemorySecretSource } from '../../../src/relay/sds/secret-source.js';
import { ADS_SERVICE } from '../../../src/relay/xds/services.js';
import { LocalStore } from '../../../src/snapshot/store/local.js';
import { publishSnapshot } from '../../../src/snapshot/store/publish.js';
import { resourceToJson } from '../../../src/xds/json.js';
import { decodeMessage } from '../../../src/xds/proto.js';
import { XDS_TYPE_NAME, XDS_TYPE_URL } from '../../../src/xds/type-urls.js';
import { compileFiles } from '../../helpers/mesh.js';
import { BOOKINFO_STATE, ISTIO_SAMPLES, REPO } from '../../helpers/paths.js';
import { TestStream, type Resp } from '../protocol-client.js';
import { tempDir } from '../store-fixture.js';
import { serviceAccountReview } from './stand-ins.js';
import { makeCa, type Issued, type TestCa } from './pki.js';

const GATEWAY_NS = 'istio-system';
const GATEWAY_SA = 'istio-ingressgateway-service-account';
const ROUTER = {
  id: `router~10.244.0.20~istio-ingressgateway-0.${GATEWAY_NS}~${GATEWAY_NS}.svc.cluster.local`,
  metadata: {
    fields: {
      NAMESPACE: { stringValue: GATEWAY_NS },
      LABELS: {
        structValue: {
          fields: { app: { stringValue: 'istio-ingressgateway' }, istio: { stringValue: 'ingressgateway' } },
        },
      },
    },
  },
};

// `/^sa:([a-z0-9-]+):([a-z0-9-]+)$/` tokens are the service account their groups name.
const review = serviceAccountReview(/^sa:([a-z0-9-]+):([a-z0-9-]+)$/);

const tmp = tempDir('meshsnap-gw-sds-');
let ca: TestCa;
let leaf: Issued;
let relay: Relay | undefined;
let client: grpc.Client | undefined;
let stream: TestStream | undefined;
const storeDir = join(tmp.dir, 'store');

before(async () => {
  ca = makeCa(tmp.dir);
  leaf = ca.issue('bookinfo', { dns: ['bookinfo.example.com'] });
  const secrets = new MemorySecretSource();
  secrets.set(GATEWAY_NS, 'bookinfo-cert', {
    data: { 'tls.crt': leaf.cert, 'tls.key': leaf.key },
    revision: 'uid-1/1',
  });
  const compiled = compileFiles([
    BOOKINFO_STATE,
    join(ISTIO_SAMPLES, 'bookinfo', 'networking', 'destination-rule-all.yaml'),
    join(REPO, 'test', 'golden', 'gateway-tls-simple', 'inputs', 'gateway.yaml'),
  ]);
  const store = new LocalStore(storeDir);
  await publishSnapshot(store, 'main', compiled.snapshot, { createdAt: '2026-11-24T00:00:00Z' });
  const server = ca.issue('relay', { dns: ['localhost'], ip: ['127.0.0.1'] });
  relay = await startRelay({
    store,
    host: '127.0.0.1',
    port: 0,
    httpPort: 0,
    pollMs: 60_000,
    secrets,
    security: {
      tls: { certFile: server.certFile, keyFile: server.keyFile },
      authenticators: [review],
      secretAccess: (ns, sa) => Promise.resolve(ns === GATEWAY_NS && sa === GATEWAY_SA),
    },
  });
});

after(async () => {
  stream?.close();
  client?.close();
  await relay?.close();
  tmp.remove();
});

test(
  'an ingress gateway: listener over ADS names kubernetes://bookinfo-cert, the same stream serves it',
  { timeout: 60_000 },
  async () => {
    client = bearerTlsClient(relay!.port, ca.cert, `sa:${GATEWAY_NS}:${GATEWAY_SA}`);
    stream = new TestStream(client, `/${ADS_SERVICE}/StreamAggregatedResources`, false);

    stream.send({ node: ROUTER, type_url: XDS_TYPE_URL.listeners, resource_names: [] });
    const lds: Resp = await stream.next(10_000);
    assert.equal(lds.type_url, XDS_TYPE_URL.listeners);
    // config_dump JSON: the TLS context sits in an Any (the transport socket), expanded there.
    const listeners = lds.resources.map((r) => resourceToJson(XDS_TYPE_NAME.listeners, r.value ?? new Uint8Array()));
    const https = listeners.find((l) => JSON.stringify(l).includes('"name":"kubernetes://bookinfo-cert"'));
    assert.ok(https, `a listener naming kubernetes://bookinfo-cert among ${listeners.length}`);
    stream.send({
      type_url: XDS_TYPE_URL.listeners,
      resource_names: [],
      response_nonce: lds.nonce,
      version_info: lds.version_info,
    });

    stream.send({ type_url: SECRET_TYPE_URL, resource_names: ['kubernetes://bookinfo-cert'] });
    let sds: Resp = await stream.next(10_000);
    while (sds.type_url !== SECRET_TYPE_URL) sds = await stream.next(10_000);
    const [secret] = sds.resources.map(
      (r) =>
        decodeMessage(SECRET_TYPE_NAME, r.value ?? new Uint8Array()) as {
          name: string;
          tls_certificate?: {
            certificate_chain: { inline_bytes: Uint8Array };
            private_key: { inline_bytes: Uint8Array };
          };
        },
    );
    assert.equal(secret?.name, 'kubernetes://bookinfo-cert');
    assert.equal(
      Buffer.from(secret?.tls_certificate?.certificate_chain.inline_bytes ?? []).toString(),
      leaf.cert.toString(),
    );
    assert.equal(Buffer.from(secret?.tls_certificate?.private_key.inline_bytes ?? []).toString(), leaf.key.toString());

    // The store holds the name the listener uses, never the key.
    const key = leaf.key.toString().split('\n')[1] ?? '';
    assert.ok(key.length > 20);
    const walk = (dir: string): string[] =>
      readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? walk(join(dir, f)) : [join(dir, f)]));
    for (const f of walk(storeDir))
      assert.ok(!readFileSync(f).toString('latin1').includes(key), `key material in ${f}`);
  },
);

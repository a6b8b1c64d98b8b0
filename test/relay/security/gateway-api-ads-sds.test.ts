/**
 * A Gateway API gateway over one ADS stream, as istiod serves it: the router node (authenticated as
 * the Gateway's service account over TLS) gets its compiled HTTPS listener, which names its
 * certificateRefs `kubernetes-gateway://<ns>/<name>` with `sds_config: ads`, then asks the same
 * stream for them and receives the certificates and keys read live from Kubernetes: the one of its
 * own namespace and the one another namespace grants it (ReferenceGrant). A name its Gateway does
 * not reference is not served.
 */
import * as grpc from '@grpc/grpc-js';
import { bearerTlsClient } from './bearer-client.js';
import assert from 'node:assert/strict';
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
import {
  compileConformance,
  gatewayNode,
  gatewayPod,
  INFRA,
  WEB,
} from '../../compile/gateway-api/conformance-harness.js';
import { TestStream, type Resp } from '../protocol-client.js';
import { tempDir } from '../store-fixture.js';
import { serviceAccountReview, capturingLogger } from './stand-ins.js';
import { makeCa, type Issued, type TestCa } from './pki.js';

const GATEWAY_SA = 'secure-istio';
const OWN = `kubernetes-gateway://${INFRA}/cert`;
const GRANTED = `kubernetes-gateway://${WEB}/certificate`;
const UNREFERENCED = `kubernetes-gateway://${INFRA}/other`;

const meshWith = (certificateRefs: string) => `---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: secure, namespace: ${INFRA}}
spec:
  gatewayClassName: istio
  listeners:
  - name: https
    port: 443
    protocol: HTTPS
    hostname: secure.example.com
    tls: {certificateRefs: [${certificateRefs}]}
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: secret, namespace: ${WEB}}
spec:
  from: [{group: gateway.networking.k8s.io, kind: Gateway, namespace: ${INFRA}}]
  to: [{group: "", kind: Secret, name: certificate}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: secure, namespace: ${INFRA}}
spec:
  parentRefs: [{name: secure}]
  rules: [{backendRefs: [{name: infra-backend-v1, port: 8080}]}]
${gatewayPod('secure', INFRA, 12, [443])}`;
const MESH = meshWith(`{name: cert}, {name: certificate, namespace: ${WEB}}`);

// gatewayNode's id and labels, as an Envoy sends them (metadata as a protobuf Struct).
const node = gatewayNode('secure', INFRA, 12);
const ROUTER = {
  id: node.id,
  metadata: {
    fields: {
      NAMESPACE: { stringValue: INFRA },
      LABELS: {
        structValue: {
          fields: Object.fromEntries(Object.entries(node.metadata.LABELS).map(([k, v]) => [k, { stringValue: v }])),
        },
      },
    },
  },
};

// `/^sa:([a-z0-9-]+):([a-z0-9-]+)$/` tokens are the service account their groups name.
const review = serviceAccountReview(/^sa:([a-z0-9-]+):([a-z0-9-]+)$/);

const tmp = tempDir('meshsnap-gwapi-sds-');
const { logged, logger: capture } = capturingLogger();
let ca: TestCa;
let own: Issued;
let granted: Issued;
let relay: Relay | undefined;
let client: grpc.Client | undefined;
let stream: TestStream | undefined;
let store: LocalStore;

before(async () => {
  ca = makeCa(tmp.dir);
  own = ca.issue('own', { dns: ['secure.example.com'] });
  granted = ca.issue('granted', { dns: ['secure.example.com'] });
  const secrets = new MemorySecretSource();
  secrets.set(INFRA, 'cert', { data: { 'tls.crt': own.cert, 'tls.key': own.key }, revision: 'uid-1/1' });
  secrets.set(WEB, 'certificate', { data: { 'tls.crt': granted.cert, 'tls.key': granted.key }, revision: 'uid-2/1' });
  secrets.set(INFRA, 'other', { data: { 'tls.crt': own.cert, 'tls.key': own.key }, revision: 'uid-3/1' });
  const compiled = compileConformance(MESH);
  store = new LocalStore(join(tmp.dir, 'store'));
  await publishSnapshot(store, 'main', compiled.snapshot, { createdAt: '2026-11-24T00:00:00Z' });
  const server = ca.issue('relay', { dns: ['localhost'], ip: ['127.0.0.1'] });
  relay = await startRelay({
    store,
    host: '127.0.0.1',
    port: 0,
    httpPort: 0,
    pollMs: 100,
    secrets,
    log: capture,
    security: {
      tls: { certFile: server.certFile, keyFile: server.keyFile },
      authenticators: [review],
      // No SubjectAccessReview grants anything: verified Gateway API references need none.
      secretAccess: () => Promise.resolve(false),
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
  'a Gateway API gateway: its listener names kubernetes-gateway://ns/cert, the same ADS stream serves it',
  { timeout: 60_000 },
  async () => {
    client = bearerTlsClient(relay!.port, ca.cert, `sa:${INFRA}:${GATEWAY_SA}`);
    stream = new TestStream(client, `/${ADS_SERVICE}/StreamAggregatedResources`, false);

    stream.send({ node: ROUTER, type_url: XDS_TYPE_URL.listeners, resource_names: [] });
    const lds: Resp = await stream.next(10_000);
    assert.equal(lds.type_url, XDS_TYPE_URL.listeners);
    const listeners = lds.resources.map((r) => resourceToJson(XDS_TYPE_NAME.listeners, r.value ?? new Uint8Array()));
    const https = JSON.stringify(listeners.find((l) => JSON.stringify(l).includes(`"name":"${OWN}"`)));
    assert.ok(https, `a listener naming ${OWN} among ${listeners.length}`);
    assert.ok(https.includes(`"name":"${GRANTED}"`), 'the granted certificate on the same listener');
    assert.ok(https.includes('"ads":{}'), 'served over the ADS stream');
    stream.send({
      type_url: XDS_TYPE_URL.listeners,
      resource_names: [],
      response_nonce: lds.nonce,
      version_info: lds.version_info,
    });

    stream.send({ type_url: SECRET_TYPE_URL, resource_names: [OWN, GRANTED, UNREFERENCED] });
    let sds: Resp = await stream.next(10_000);
    while (sds.type_url !== SECRET_TYPE_URL) sds = await stream.next(10_000);
    const got = sds.resources.map(
      (r) =>
        decodeMessage(SECRET_TYPE_NAME, r.value ?? new Uint8Array()) as {
          name: string;
          tls_certificate?: {
            certificate_chain: { inline_bytes: Uint8Array };
            private_key: { inline_bytes: Uint8Array };
          };
        },
    );
    const text = (b: Uint8Array | undefined): string => Buffer.from(b ?? []).toString();
    assert.deepEqual(
      got.map((s) => s.name),
      [OWN, GRANTED],
    );
    const byName = new Map(got.map((s) => [s.name, s]));
    assert.equal(text(byName.get(OWN)?.tls_certificate?.certificate_chain.inline_bytes), own.cert.toString());
    assert.equal(text(byName.get(OWN)?.tls_certificate?.private_key.inline_bytes), own.key.toString());
    assert.equal(text(byName.get(GRANTED)?.tls_certificate?.certificate_chain.inline_bytes), granted.cert.toString());
    assert.equal(text(byName.get(GRANTED)?.tls_certificate?.private_key.inline_bytes), granted.key.toString());

    const denied = logged.filter((l) => l.event === 'sds.denied').map((l) => l.fields);
    assert.deepEqual(
      denied.map((f) => f.name),
      [UNREFERENCED],
    );
    assert.match(String(denied[0]?.reason), /not a certificate reference verified/);
    stream.send({
      type_url: SECRET_TYPE_URL,
      resource_names: [OWN, GRANTED, UNREFERENCED],
      response_nonce: sds.nonce,
      version_info: sds.version_info,
    });
  },
);

test(
  'a certificateRef the Gateway drops: the next snapshot takes its Secret away from the stream',
  { timeout: 60_000 },
  async () => {
    assert.ok(stream, 'the stream of the first test');
    await publishSnapshot(store, 'main', compileConformance(meshWith('{name: cert}')).snapshot, {
      createdAt: '2026-11-24T00:01:00Z',
    });
    let names: string[] | undefined;
    for (let i = 0; i < 20 && !names; i++) {
      const r: Resp = await stream.next(10_000);
      if (r.type_url === SECRET_TYPE_URL)
        names = r.resources.map(
          (x) => (decodeMessage(SECRET_TYPE_NAME, x.value ?? new Uint8Array()) as { name: string }).name,
        );
    }
    assert.deepEqual(names, [OWN]);
  },
);

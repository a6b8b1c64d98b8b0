/**
 * Certificate rotation with streams open: the relay's certificate and key files are replaced (as
 * cert-manager does); new connections get the new certificate, the stream opened before keeps
 * being served (it receives the next version's push), and a half-written rotation (a key that is
 * not the certificate's) is not taken.
 */
import * as grpc from '@grpc/grpc-js';
import assert from 'node:assert/strict';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { after, test } from 'node:test';
import { silentLogger } from '../../../src/relay/log.js';
import { startRelay } from '../../../src/relay/relay.js';
import { LocalStore } from '../../../src/snapshot/store/local.js';
import { XDS_TYPE_URL } from '../../../src/xds/type-urls.js';
import { ADS_SERVICE } from '../../../src/relay/xds/services.js';
import { NODE, TestStream } from '../protocol-client.js';
import { eventually, publishSet, tempDir } from '../store-fixture.js';
import { makeCa } from './pki.js';

const tmp = tempDir('meshsnap-rotation-');
after(() => tmp.remove());

/** The fingerprint of the certificate a new TLS connection to the port is given. */
function servedFingerprint(port: number, ca: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ca, ALPNProtocols: ['h2'], servername: 'localhost' }, () => {
      const fp = socket.getPeerX509Certificate()?.fingerprint256 ?? '';
      socket.destroy();
      resolve(fp);
    });
    socket.once('error', reject);
    socket.setTimeout(3000, () => socket.destroy(new Error('TLS handshake timed out')));
  });
}

test(
  'rotation: new connections get the new certificate, an open stream keeps working',
  { timeout: 60_000 },
  async (t) => {
    const ca = makeCa(tmp.dir);
    const a = ca.issue('relay-a', { dns: ['localhost'], ip: ['127.0.0.1'] });
    const b = ca.issue('relay-b', { dns: ['localhost'], ip: ['127.0.0.1'] });
    const client = ca.issue('productpage', { uri: 'spiffe://cluster.local/ns/default/sa/bookinfo-productpage' });
    const certFile = join(tmp.dir, 'tls.crt');
    const keyFile = join(tmp.dir, 'tls.key');
    copyFileSync(a.certFile, certFile);
    copyFileSync(a.keyFile, keyFile);
    const store = new LocalStore(join(tmp.dir, 'store'));
    await publishSet(store, 'base');
    const relay = await startRelay({
      store,
      host: '127.0.0.1',
      port: 0,
      httpPort: 0,
      pollMs: 50,
      log: silentLogger,
      security: { tls: { certFile, keyFile, clientCaFile: ca.certFile, reloadMs: 100 } },
    });
    t.after(() => relay.close());
    const fpA = new X509Certificate(a.cert).fingerprint256;
    const fpB = new X509Certificate(b.cert).fingerprint256;
    assert.equal(await servedFingerprint(relay.port, ca.cert), fpA);

    const creds = (): grpc.ChannelCredentials => grpc.credentials.createSsl(ca.cert, client.key, client.cert);
    const c1 = new grpc.Client(`127.0.0.1:${relay.port}`, creds());
    t.after(() => c1.close());
    const s1 = new TestStream(c1, `/${ADS_SERVICE}/StreamAggregatedResources`, false);
    t.after(() => s1.close());
    s1.send({ node: NODE.productpage, type_url: XDS_TYPE_URL.routes, resource_names: ['9080'] });
    const first = await s1.next(5000);
    s1.send({
      node: NODE.productpage,
      type_url: XDS_TYPE_URL.routes,
      resource_names: ['9080'],
      response_nonce: first.nonce,
      version_info: first.version_info,
    });

    // A half-written rotation: the new key with the old certificate. Not taken.
    copyFileSync(b.keyFile, keyFile);
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(await servedFingerprint(relay.port, ca.cert), fpA, 'a key that is not the certificate’s is not taken');
    copyFileSync(b.certFile, certFile);
    await eventually(async () => (await servedFingerprint(relay.port, ca.cert)) === fpB, 5000, 'the new certificate');
    assert.equal(relay.status().security.certificate?.fingerprint, fpB);

    // The stream opened under the old certificate is still served: the next version reaches it.
    await publishSet(store, 'reviews50');
    const pushed = await s1.next(10_000);
    assert.equal(pushed.type_url, XDS_TYPE_URL.routes);
    assert.notEqual(pushed.version_info, first.version_info);

    // A new connection (new handshake, new certificate) is served too.
    const c2 = new grpc.Client(`127.0.0.1:${relay.port}`, creds());
    t.after(() => c2.close());
    const s2 = new TestStream(c2, `/${ADS_SERVICE}/StreamAggregatedResources`, false);
    t.after(() => s2.close());
    s2.send({ node: NODE.productpage, type_url: XDS_TYPE_URL.clusters });
    assert.ok((await s2.next(5000)).resources.length > 0);
  },
);

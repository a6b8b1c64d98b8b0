/**
 * The load clients' envelope reader gives what the generated DiscoveryResponse decoder gives for
 * version_info, type_url and nonce, whatever else the response carries.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readResponseEnvelope } from '../../bench/xds-envelope.js';
import { envoy } from '../../src/xds/proto.js';
import { mulberry32 } from '../inputs/prng.js';

const { DiscoveryResponse } = envoy.service.discovery.v3;
const CLUSTER = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';

function assertSameEnvelope(bytes: Uint8Array, label: string): void {
  const want = DiscoveryResponse.decode(bytes);
  assert.deepEqual(
    readResponseEnvelope(bytes),
    { version_info: want.version_info, type_url: want.type_url, nonce: want.nonce },
    label,
  );
}

test('the envelope of responses with resources, a canary, a control plane and multi-byte text', () => {
  const rand = mulberry32(16);
  const text = (n: number) =>
    Array.from({ length: n }, () => String.fromCodePoint(32 + Math.floor(rand() * 3000))).join('');
  for (let i = 0; i < 200; i++) {
    const resources = Array.from({ length: Math.floor(rand() * 40) }, () => ({
      type_url: CLUSTER,
      value: Uint8Array.from({ length: Math.floor(rand() * 2000) }, () => Math.floor(rand() * 256)),
    }));
    const message = {
      ...(rand() < 0.9 ? { version_info: text(Math.floor(rand() * 80)) } : {}),
      resources,
      ...(rand() < 0.3 ? { canary: true } : {}),
      ...(rand() < 0.95 ? { type_url: CLUSTER } : {}),
      ...(rand() < 0.9 ? { nonce: text(Math.floor(rand() * 20)) } : {}),
      ...(rand() < 0.3 ? { control_plane: { identifier: text(30) } } : {}),
    };
    const bytes = DiscoveryResponse.encode(message).finish();
    assertSameEnvelope(bytes, `response ${i}`);
    assertSameEnvelope(Buffer.from(bytes), `response ${i} as a Buffer`);
  }
});

test('a field written twice: the last one wins, as protobuf decoding says', () => {
  const first = DiscoveryResponse.encode({ version_info: 'v1', nonce: 'a', type_url: CLUSTER }).finish();
  const second = DiscoveryResponse.encode({ version_info: 'v2', nonce: 'b' }).finish();
  const bytes = Buffer.concat([first, second]);
  assertSameEnvelope(bytes, 'concatenated');
  assert.equal(readResponseEnvelope(bytes).version_info, 'v2');
});

test('a truncated response is an error, as it is for the generated decoder', () => {
  const bytes = DiscoveryResponse.encode({
    version_info: 'v1',
    resources: [{ type_url: CLUSTER, value: new Uint8Array(100) }],
    nonce: 'n',
  }).finish();
  const cut = bytes.subarray(0, bytes.length - 4); // the nonce and a byte of the resource
  assert.throws(() => DiscoveryResponse.decode(cut));
  assert.throws(() => readResponseEnvelope(cut));
});

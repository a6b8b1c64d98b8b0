import { test } from 'node:test';
import assert from 'node:assert/strict';
import { digestHex, digestOf, isDigest, nobleSha256Hex, utf8Bytes } from '../../src/snapshot/digest.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { canonicalJson } from '../../src/canonical-json.js';

test('noble and node:crypto hashers give the same digests', () => {
  for (const size of [0, 1, 55, 56, 63, 64, 65, 1000, 70_000]) {
    const bytes = new Uint8Array(size).map((_, i) => (i * 31 + size) & 0xff);
    assert.equal(digestOf(bytes, nobleSha256Hex), digestOf(bytes, nodeSha256Hex), `size ${size}`);
  }
});

test('digests are sha256:<hex> of the bytes', () => {
  // FIPS 180-2 test vector for "abc"
  assert.equal(digestOf(utf8Bytes('abc')), 'sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  assert.ok(isDigest(digestOf(new Uint8Array())));
  assert.equal(isDigest('sha256:abc'), false);
  assert.equal(isDigest('SHA256:' + 'a'.repeat(64)), false);
  assert.equal(digestHex('sha256:' + 'f'.repeat(64)), 'f'.repeat(64));
  assert.equal(digestHex('md5:00'), undefined);
});

test('canonical JSON sorts keys at every depth and drops undefined members', () => {
  const a = canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: undefined } });
  const b = canonicalJson({ a: { d: [3, { y: 2, z: 1 }] }, b: 1 });
  assert.equal(a, b);
  assert.equal(a, '{"a":{"d":[3,{"y":2,"z":1}]},"b":1}');
});

test('canonical JSON never throws on user data: non-finite numbers become null, undefined, function and symbol members are left out', () => {
  const value = { b: [Number.NaN, undefined, () => 1, -Infinity], a: { y: Infinity, x: Symbol('s'), w: 'ü"' }, c: 12n };
  assert.equal(canonicalJson(value), '{"a":{"w":"ü\\"","y":null},"b":[null,null,null,null],"c":12}');
  assert.equal(canonicalJson(undefined), 'null');
});

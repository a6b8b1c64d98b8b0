/** The route chunker's caches: parts are the exact encoding, and a shared chunk survives rarer variants. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CHUNK_SPREAD, RouteChunker } from '../../src/snapshot/route-chunks.js';
import { fnv1a32 } from '../../src/snapshot/tree.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { encodeMessage, type RouteConfiguration, type VirtualHost } from '../../src/xds/proto.js';
import { TypeName } from '../../src/xds/type-urls.js';

/** A virtual host whose name does not end a chunk, so the next one joins its chunk. */
function openHost(prefix: string): VirtualHost {
  for (let i = 0; ; i++) {
    const name = `${prefix}-${i}:80`;
    if (fnv1a32(name) % CHUNK_SPREAD !== 0) return { name, domains: [name] };
  }
}

test('a chunk most configs share stays cached while rarer variants of its run come and go (least recently used goes first)', () => {
  let chunksHashed = 0;
  const chunker = new RouteChunker((bytes) => {
    chunksHashed++;
    return nodeSha256Hex(bytes);
  });
  const first = openHost('shared');
  // No name and no fields after virtual_hosts: the only parts are chunks, each hashed once when built.
  const shared: RouteConfiguration = { virtual_hosts: [first, openHost('common')] };
  const variant = (i: number): RouteConfiguration => ({ virtual_hosts: [first, openHost(`own-${i}`)] });
  const parts = (rc: RouteConfiguration) => {
    const p = chunker.parts(rc);
    assert.ok(Buffer.concat(p.map((x) => x.bytes)).equals(Buffer.from(encodeMessage(TypeName.RouteConfiguration, rc))));
    return p;
  };

  const sharedParts = parts(shared);
  assert.equal(chunksHashed, 1);
  for (let i = 1; i <= 4; i++) {
    parts(variant(i));
    assert.deepEqual(parts(shared), sharedParts, 'the shared chunk is the same part object');
  }
  // Four variants were built and the shared chunk never again (a FIFO would have dropped it for the fourth).
  assert.equal(chunksHashed, 5);
});

import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { recordDiagnostics } from '../../src/snapshot/manifest.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { LocalCompiler } from '../../src/watch/compiler.js';
import { ObjectCache } from '../../src/watch/object-cache.js';
import { RemoteCompiler } from '../../src/watch/remote-compile.js';
import { serveCompileRequest } from '../../src/watch/remote-protocol.js';
import { baseMesh, destinationRule, servedFromStore, slice, startHarness, virtualService } from './watch-harness.js';

const REVIEWS = 'reviews.default.svc.cluster.local';

test(
  'an object going invalid keeps its last good version: diagnostic and substitution recorded',
  { timeout: 30_000 },
  async () => {
    const h = await startHarness();
    try {
      h.server.apply(destinationRule(REVIEWS));
      h.server.apply(virtualService(REVIEWS, [80, 20]));
      await h.settle(2);
      const good = (await h.head())!;
      const goodRoutes = JSON.stringify((await servedFromStore(h.store, good)).routes.get('9080'));

      // Invalid alone: the snapshot is unchanged, so nothing is published; the watcher says why.
      h.server.apply(virtualService(REVIEWS, [80, 10]));
      await h.settle(1);
      assert.equal((await h.head())!.version, good.version);
      assert.equal(h.watcher.rounds.at(-1)?.publish, 'unchanged');
      assert.ok(h.logs.some((l) => l.code === 'last-known-good'));

      // With a real change next to it: published, still routing 80/20, and the record says so.
      h.server.apply(slice('reviews', [{ ip: '10.244.0.11', pod: 'reviews-v1-1' }]));
      await h.settle(1);
      const rec = (await h.head())!;
      assert.equal(rec.version, good.version + 1);
      assert.equal(JSON.stringify((await servedFromStore(h.store, rec)).routes.get('9080')), goodRoutes);
      const d = (await recordDiagnostics(h.store, rec)).find((x) => x.code === 'last-known-good');
      assert.ok(d, 'no last-known-good diagnostic');
      assert.equal(d.kind, 'VirtualService');
      assert.equal(d.name, REVIEWS);
      assert.equal(d.field, 'spec.http[0].route');
      const sub = rec.provenance?.lastKnownGood?.[0];
      assert.ok(sub);
      assert.equal(sub.name, REVIEWS);
      assert.ok(
        sub.rejectedResourceVersion &&
          sub.usedResourceVersion &&
          sub.rejectedResourceVersion !== sub.usedResourceVersion,
      );
      // Provenance names both changes since the parent: the rejected VirtualService and the slice.
      assert.deepEqual(
        rec.provenance?.changes.map((c) => c.kind),
        ['EndpointSlice', 'VirtualService'],
      );

      // Fixed: the substitution ends.
      h.server.apply(virtualService(REVIEWS, [50, 50]));
      await h.settle(1);
      const fixed = (await h.head())!;
      assert.equal(fixed.provenance?.lastKnownGood, undefined);
      assert.ok(!(await recordDiagnostics(h.store, fixed)).some((x) => x.code === 'last-known-good'));
      assert.match(JSON.stringify((await servedFromStore(h.store, fixed)).routes.get('9080')), /"weight":50/);
    } finally {
      await h.close();
    }
  },
);

test('--compile-url: a remote compile gives the snapshot a local one gives', { timeout: 30_000 }, async () => {
  const remote = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        const body = serveCompileRequest(JSON.parse(Buffer.concat(chunks).toString('utf8')), nodeSha256Hex);
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      } catch (err) {
        res.writeHead(400).end(String(err));
      }
    });
  });
  await new Promise<void>((r) => remote.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(remote.address() as AddressInfo).port}/compile`;
  try {
    // Directly: the same objects, both ways.
    const cache = new ObjectCache(nodeSha256Hex);
    for (const o of [...baseMesh(), destinationRule(REVIEWS), virtualService(REVIEWS, [70, 30])]) cache.upsert(o);
    const objects = [...cache.values()];
    const local = await new LocalCompiler(nodeSha256Hex).compile({ objects, changed: new Set() });
    const viaUrl = await new RemoteCompiler(url, { hasher: nodeSha256Hex }).compile({ objects, changed: new Set() });
    assert.equal(viaUrl.snapshot.digest, local.snapshot.digest);
    assert.equal(viaUrl.mode, 'remote');

    // Through the watcher: the published version equals a local watcher's.
    const a = await startHarness();
    const b = await startHarness({ compiler: new RemoteCompiler(url, { hasher: nodeSha256Hex }) });
    try {
      assert.equal((await b.head())!.digest, (await a.head())!.digest);
      assert.equal(b.watcher.rounds[0]?.mode, 'remote');
    } finally {
      await a.close();
      await b.close();
    }
  } finally {
    remote.closeAllConnections();
    await new Promise<void>((r) => remote.close(() => r()));
  }
});

/**
 * The SnapshotStore contract, run against every backend (local-store, s3-store, r2-store tests).
 * A target opens a fresh, empty store per test; `conditional` says whether the backend enforces
 * create-only and compare-and-swap writes (s3rver does not: those assertions are skipped there,
 * and the skip is reported by name).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AuditRecord } from '../../src/snapshot/audit.js';
import { digestOf } from '../../src/snapshot/digest.js';
import { MAX_PACKS, loadSnapshotPacked } from '../../src/snapshot/store/packs.js';
import { publishSnapshot } from '../../src/snapshot/store/publish.js';
import { CorruptObjectError, DigestMismatchError, InvalidDigestError, type SnapshotStore } from '../../src/snapshot/store/store.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { CREATED_AT, meshSnapshot, nthSnapshot } from './helpers.js';

export interface OpenedStore {
  readonly store: SnapshotStore;
  /** Writes raw bytes under a layout key (`objects/sha256/aa/hex`), bypassing every check. */
  readonly rawPut: (key: string, bytes: Uint8Array) => Promise<void>;
  readonly close?: () => Promise<void>;
}

export interface ContractTarget {
  readonly name: string;
  readonly conditional: boolean;
  readonly open: () => Promise<OpenedStore>;
  /** Smaller histories for slow transports (Miniflare's R2 proxy costs ~40 ms a call). */
  readonly scale?: { readonly services: number; readonly versions: number };
}

const utf8 = new TextEncoder();
const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1);
/** Buffers and plain Uint8Arrays compare unequal: compare plain copies. */
const plain = (b: Uint8Array | null | undefined): Uint8Array | null => (b ? new Uint8Array(b) : null);
const hex = (digest: string): string => digest.slice('sha256:'.length);

const RACERS = 8;

export function runStoreContract(target: ContractTarget): void {
  const withStore = (name: string, fn: (s: OpenedStore) => Promise<void>, opts: { skip?: string | false } = {}) =>
    test(name, { timeout: 120_000, ...(opts.skip ? { skip: opts.skip } : {}) }, async () => {
      const opened = await target.open();
      try {
        await fn(opened);
      } finally {
        await opened.close?.();
      }
    });
  const needsConditional = target.conditional ? false : `${target.name} ignores If-None-Match/If-Match: conditional writes cannot be proven on it`;

  describe(`SnapshotStore contract: ${target.name}`, () => {
    withStore('objects: create-only, verified reads, refused mismatches', async ({ store, rawPut }) => {
      const bytes = utf8.encode('hello object');
      const d = digestOf(bytes);
      assert.equal(await store.hasObject(d), false);
      assert.equal(await store.getObject(d), null);
      assert.equal(await store.putObject(d, bytes), 'created');
      assert.equal(await store.putObject(d, bytes), 'exists');
      assert.deepEqual(plain(await store.getObject(d)), plain(bytes));
      assert.equal(await store.hasObject(d), true);
      await assert.rejects(store.putObject(d, utf8.encode('other')), DigestMismatchError);
      await assert.rejects(store.getObject('sha256:nothex'), InvalidDigestError);
      const bad = utf8.encode('corrupt me');
      const bd = digestOf(bad);
      await rawPut(`objects/sha256/${hex(bd).slice(0, 2)}/${hex(bd)}`, utf8.encode('flipped bits'));
      await assert.rejects(store.getObject(bd), CorruptObjectError);
    });

    withStore('documents and snapshots: a published snapshot reads back identical', async ({ store }) => {
      const snap = meshSnapshot(40, 1);
      const res = await publishSnapshot(store, 'main', snap, { createdAt: CREATED_AT, hasher: nodeSha256Hex });
      assert.equal(res.status, 'published');
      assert.deepEqual(await store.getSnapshot(snap.digest), snap.content);
      for (const doc of snap.documents) assert.equal(await store.hasDocument(doc.digest), true);
      const d = snap.documents[0];
      assert.ok(d);
      assert.deepEqual(plain(await store.getDocument(d.digest)), plain(d.bytes));
      assert.deepEqual(await store.putDocuments(new Map([[d.digest, d.bytes]])), [], 'an existing document is not written again');
      await assert.rejects(store.putDocuments(new Map([[d.digest, utf8.encode('{}')]])), DigestMismatchError);
      assert.equal(await store.getSnapshot(digestOf(utf8.encode('absent'))), null);
    });

    withStore('channels: numbered versions with parents, head, unchanged republish', async ({ store }) => {
      assert.equal(await store.readChannel('main'), null);
      assert.deepEqual(await store.listVersions('main'), []);
      for (const n of range(3)) {
        const r = await publishSnapshot(store, 'main', nthSnapshot(n), { createdAt: CREATED_AT, hasher: nodeSha256Hex });
        assert.equal(r.status === 'published' && r.record.version, n);
      }
      assert.equal((await publishSnapshot(store, 'main', nthSnapshot(3), { createdAt: CREATED_AT })).status, 'unchanged');
      assert.deepEqual(await store.listVersions('main'), [3, 2, 1]);
      assert.deepEqual(await store.readChannel('main'), { version: 3, digest: nthSnapshot(3).digest });
      const v2 = await store.getVersion('main', 2);
      assert.equal(v2?.parent, 1);
      assert.equal(v2?.digest, nthSnapshot(2).digest);
      assert.equal(await store.getVersion('main', 9), null);
      assert.equal(await store.readChannel('other'), null);
    });

    withStore('audit: batches append and read back in order, since filters', async ({ store }) => {
      const rec = (at: string, nodeId: string): AuditRecord => ({ at, kind: 'ack', relay: 'r1', channel: 'main', nodeId, classId: 'c', typeUrl: 't', version: 'v', snapshotVersion: 1 });
      await store.appendAudit([]);
      await store.appendAudit([rec('2025-01-01T00:00:00.000Z', 'a'), rec('2025-01-01T00:00:01.000Z', 'b')]);
      await store.appendAudit([rec('2025-01-02T00:00:00.000Z', 'c')]);
      const all: string[] = [];
      for await (const r of store.readAudit()) all.push(r.nodeId);
      assert.deepEqual(all, ['a', 'b', 'c']);
      const since: string[] = [];
      for await (const r of store.readAudit({ since: '2025-01-01T00:00:00.500Z' })) since.push(r.nodeId);
      assert.deepEqual(since, ['b', 'c']);
    });

    withStore('packs: every version loads from ≤ 8 packs and nothing else, identical to the tree', async ({ store }) => {
      let sinceCheckpoint = 0;
      const { services, versions } = target.scale ?? { services: 200, versions: 30 };
      for (const rev of range(versions)) {
        // Mostly one-service changes, with a few bigger ones.
        const snap = meshSnapshot(services, rev, rev % 10 === 0 ? Math.ceil(services / 7) : 1);
        const res = await publishSnapshot(store, 'main', snap, { createdAt: CREATED_AT, hasher: nodeSha256Hex });
        assert.equal(res.status, 'published');
        const record = res.status === 'published' ? res.record : undefined;
        assert.ok(record?.packs, 'the record names its packs');
        assert.ok(1 + record.packs.deltas.length <= MAX_PACKS, `${1 + record.packs.deltas.length} packs`);
        sinceCheckpoint = record.packs.deltas.reduce((n, p) => n + p.bytes, 0);
        assert.ok(sinceCheckpoint <= 0.5 * record.packs.checkpoint.bytes + 1);
        const loaded = await loadSnapshotPacked(store, record, nodeSha256Hex);
        assert.ok(loaded);
        assert.equal(loaded.fallbackReads, 0, `version ${rev}: everything came from the packs`);
        assert.deepEqual(loaded.content, snap.content);
        for (const [d, b] of snap.objects) assert.deepEqual(plain(loaded.objects.get(d)), plain(b));
      }
    });

    withStore('concurrent writers on one channel get distinct versions; the head ends on the newest', async ({ store }) => {
      const results = await Promise.all(range(RACERS).map((n) => publishSnapshot(store, 'race', nthSnapshot(100 + n), { createdAt: CREATED_AT })));
      const versions = results.map((r) => (r.status === 'published' ? r.record.version : -1)).sort((a, b) => a - b);
      assert.deepEqual(versions, range(RACERS));
      assert.deepEqual(await store.listVersions('race'), range(RACERS).reverse());
      const head = await store.readChannel('race');
      assert.equal(head?.version, RACERS);
      const digests = new Set<string>();
      for (const v of range(RACERS)) {
        const rec = await store.getVersion('race', v);
        assert.ok(rec && (await store.getSnapshot(rec.digest)));
        digests.add(rec.digest);
      }
      assert.equal(digests.size, RACERS, 'no record was overwritten');
    }, { skip: needsConditional });
  });
}

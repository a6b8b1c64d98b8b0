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
import { MAX_PACKS, decodePack, encodePack, loadSnapshotPacked, packDigests } from '../../src/snapshot/store/packs.js';
import { publishSnapshot } from '../../src/snapshot/store/publish.js';
import {
  CorruptObjectError,
  DigestMismatchError,
  InvalidDigestError,
  type SnapshotStore,
} from '../../src/snapshot/store/store.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import type { BuiltSnapshot } from '../../src/snapshot/build.js';
import { gc } from '../../src/history/gc.js';
import { tag } from '../../src/history/tag.js';
import type { HistoryContext } from '../../src/history/context.js';
import { CREATED_AT, meshSnapshot, nthSnapshot } from './helpers.js';
import { generateMesh } from '../../bench/synthetic.js';
import { loadStoredInputs, storedInputsOfDocuments, type BuiltInputs } from '../../src/snapshot/stored-inputs/index.js';

export interface OpenedStore {
  readonly store: SnapshotStore;
  /** Writes raw bytes under a layout key (`objects/sha256/aa/hex`), bypassing every check. */
  readonly rawPut: (key: string, bytes: Uint8Array) => Promise<void>;
  readonly close?: () => Promise<void>;
}

export interface ContractTarget {
  readonly name: string;
  readonly conditional: boolean;
  /**
   * `freshenAfterMs`: how stale a reused key may get before a reuse refreshes its time (object
   * stores; the folder store refreshes on every reuse and ignores it).
   */
  readonly open: (opts?: { readonly freshenAfterMs?: number }) => Promise<OpenedStore>;
  /** Set when the server does not give a touched key a new modification time (s3rver keeps it on a self-copy). */
  readonly touchKeepsTime?: string;
  /** Smaller histories for slow transports (Miniflare's R2 proxy costs ~40 ms a call). */
  readonly scale?: { readonly services: number; readonly versions: number };
}

const utf8 = new TextEncoder();
const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1);
/** Buffers and plain Uint8Arrays compare unequal: compare plain copies. */
const plain = (b: Uint8Array | null | undefined): Uint8Array | null => (b ? new Uint8Array(b) : null);
const hex = (digest: string): string => digest.slice('sha256:'.length);

const RACERS = 8;

/** gc's context two hours from now: with the default one-hour grace, everything stored is old enough. */
const twoHoursLater = (store: HistoryContext['store']): HistoryContext => ({
  store,
  channel: 'main',
  actor: 'contract',
  now: () => new Date(Date.now() + 2 * 3_600_000),
  hasher: nodeSha256Hex,
});

export function runStoreContract(target: ContractTarget): void {
  const withStore = (
    name: string,
    fn: (s: OpenedStore) => Promise<void>,
    opts: { skip?: string | false; freshenAfterMs?: number } = {},
  ) =>
    test(name, { timeout: 120_000, ...(opts.skip ? { skip: opts.skip } : {}) }, async () => {
      const opened = await target.open(
        opts.freshenAfterMs !== undefined ? { freshenAfterMs: opts.freshenAfterMs } : {},
      );
      try {
        await fn(opened);
      } finally {
        await opened.close?.();
      }
    });
  const needsConditional = target.conditional
    ? false
    : `${target.name} ignores If-None-Match/If-Match: conditional writes cannot be proven on it`;

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
      assert.deepEqual(
        await store.putDocuments(new Map([[d.digest, d.bytes]])),
        [],
        'an existing document is not written again',
      );
      await assert.rejects(store.putDocuments(new Map([[d.digest, utf8.encode('{}')]])), DigestMismatchError);
      assert.equal(await store.getSnapshot(digestOf(utf8.encode('absent'))), null);
    });

    withStore('channels: numbered versions with parents, head, unchanged republish', async ({ store }) => {
      assert.equal(await store.readChannel('main'), null);
      assert.deepEqual(await store.listVersions('main'), []);
      for (const n of range(3)) {
        const r = await publishSnapshot(store, 'main', nthSnapshot(n), {
          createdAt: CREATED_AT,
          hasher: nodeSha256Hex,
        });
        assert.equal(r.status === 'published' && r.record.version, n);
      }
      assert.equal(
        (await publishSnapshot(store, 'main', nthSnapshot(3), { createdAt: CREATED_AT })).status,
        'unchanged',
      );
      assert.deepEqual(await store.listVersions('main'), [3, 2, 1]);
      assert.deepEqual(await store.readChannel('main'), { version: 3, digest: nthSnapshot(3).digest });
      const v2 = await store.getVersion('main', 2);
      assert.equal(v2?.parent, 1);
      assert.equal(v2?.digest, nthSnapshot(2).digest);
      assert.equal(await store.getVersion('main', 9), null);
      assert.equal(await store.readChannel('other'), null);
    });

    withStore('audit: batches append and read back in order, since filters', async ({ store }) => {
      const rec = (at: string, nodeId: string): AuditRecord => ({
        at,
        kind: 'ack',
        relay: 'r1',
        channel: 'main',
        nodeId,
        classId: 'c',
        typeUrl: 't',
        version: 'v',
        snapshotVersion: 1,
      });
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

    withStore(
      'packs: every version loads from ≤ 8 packs and nothing else, identical to the tree',
      async ({ store }) => {
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
      },
    );

    withStore(
      'concurrent writers on one channel get distinct versions; the head ends on the newest',
      async ({ store }) => {
        const results = await Promise.all(
          range(RACERS).map((n) => publishSnapshot(store, 'race', nthSnapshot(100 + n), { createdAt: CREATED_AT })),
        );
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
      },
      { skip: needsConditional },
    );

    withStore(
      'retention primitives: listing with times, delete only what is older, never the head',
      async ({ store }) => {
        const before = Date.now() - 60_000;
        // Loose keys are what these primitives list and delete; without packs, a deleted key is gone.
        for (const n of range(3))
          await publishSnapshot(store, 'main', nthSnapshot(n), {
            createdAt: CREATED_AT,
            hasher: nodeSha256Hex,
            packs: false,
          });
        assert.deepEqual(await store.listChannels?.(), ['main']);
        const objects = await entries(store.listObjects?.());
        const documents = await entries(store.listDocuments?.());
        for (const n of range(3)) {
          for (const d of nthSnapshot(n).objects.keys())
            assert.ok(objects.has(d), `object ${d} of snapshot ${n} is listed`);
          for (const d of nthSnapshot(n).documents)
            assert.ok(documents.has(d.digest), `document ${d.digest} of snapshot ${n} is listed`);
        }
        for (const t of [...objects.values(), ...documents.values()])
          assert.ok(t > before && t < Date.now() + 60_000, `modification time ${new Date(t).toISOString()} is now`);

        const [victim] = [...nthSnapshot(1).objects.keys()].filter((d) => !nthSnapshot(3).objects.has(d));
        assert.ok(victim);
        assert.equal(await store.deleteObject?.(victim, before), false, 'written after the cutoff: kept');
        assert.equal(await store.hasObject(victim), true);
        assert.equal(await store.deleteObject?.(victim, Date.now() + 60_000), true);
        assert.equal(await store.getObject(victim), null);
        assert.equal(await store.deleteObject?.(victim, Date.now() + 60_000), false, 'already gone');
        const doc = nthSnapshot(1).digest;
        assert.equal(await store.deleteDocument?.(doc, Date.now() + 60_000), true);
        assert.equal(await store.getDocument(doc), null);
        assert.equal((await entries(store.listDocuments?.())).has(doc), false);

        await assert.rejects(async () => store.deleteVersion?.('main', 3), /head/);
        await store.deleteVersion?.('main', 1);
        assert.deepEqual(await store.listVersions('main'), [3, 2]);
        assert.deepEqual(await store.readChannel('main'), { version: 3, digest: nthSnapshot(3).digest });
      },
    );

    withStore(
      'a reuse refreshes the time gc goes by (putObject, hasObject, putDocuments, hasDocument)',
      async ({ store }) => {
        const reused = [0, 1, 2, 3].map((i) => utf8.encode(`reused ${i}`));
        const idle = utf8.encode('never reused');
        for (const b of [...reused, idle]) await store.putObject(digestOf(b), b);
        const docs = [0, 1].map((i) => utf8.encode(`{"reused":${i}}`));
        await store.putDocuments(new Map(docs.map((b) => [digestOf(b), b])));
        // S3 keeps LastModified in whole seconds: wait past two second boundaries.
        await new Promise((r) => setTimeout(r, 2_100));
        const mark = Date.now() - 1_000;
        await store.putObject(digestOf(reused[0] as Uint8Array), reused[0] as Uint8Array);
        await store.hasObject(digestOf(reused[1] as Uint8Array));
        await store.putDocuments(new Map([[digestOf(docs[0] as Uint8Array), docs[0] as Uint8Array]]));
        await store.hasDocument(digestOf(docs[1] as Uint8Array));
        assert.equal(
          await store.deleteObject?.(digestOf(idle), mark),
          true,
          'an object nobody reused is older than the mark',
        );
        for (const b of reused.slice(0, 2))
          assert.equal(await store.deleteObject?.(digestOf(b), mark), false, 'a reused object is spared');
        for (const b of docs)
          assert.equal(await store.deleteDocument?.(digestOf(b), mark), false, 'a reused document is spared');
        for (const b of reused.slice(0, 2))
          assert.deepEqual(plain(await store.getObject(digestOf(b))), plain(b), 'a touch keeps the bytes');
      },
      { freshenAfterMs: 0, skip: target.touchKeepsTime ?? false },
    );

    withStore(
      'gc: keeps the newest, tagged and head versions complete; deletes the rest; a second run finds nothing',
      async ({ store }) => {
        const versions = 5;
        const snaps = range(versions).map((rev) => meshSnapshot(12, rev, 3));
        for (const snap of snaps)
          await publishSnapshot(store, 'main', snap, { createdAt: CREATED_AT, hasher: nodeSha256Hex });
        const ctx = twoHoursLater(store);
        await tag(ctx, '2', 'release-2');
        const r = await gc(ctx, { keep: 2 });
        assert.deepEqual(r.keptVersions.main, [5, 4, 2]);
        assert.deepEqual(r.deletedVersions.main, [3, 1]);
        assert.ok(
          r.deletedObjects > 0 && r.deletedDocuments > 0,
          `deleted ${r.deletedObjects} objects, ${r.deletedDocuments} documents`,
        );
        assert.deepEqual(await store.listVersions('main'), [5, 4, 2]);
        const kept = new Set<string>();
        for (const v of [5, 4, 2]) {
          const snap = snaps[v - 1] as (typeof snaps)[number];
          const record = await store.getVersion('main', v);
          assert.ok(record);
          assert.deepEqual(await store.getSnapshot(record.digest), snap.content, `version ${v} reads back whole`);
          for (const [d, b] of snap.objects) {
            assert.deepEqual(plain(await store.getObject(d)), plain(b), `object ${d} of version ${v}`);
            kept.add(d);
          }
          const loaded = await loadSnapshotPacked(store, record, nodeSha256Hex);
          assert.equal(loaded?.fallbackReads, 0, `version ${v}: its packs are still there`);
        }
        // A dropped version's object may still be read from a pack a kept record names (a checkpoint
        // holds every object of its version), and from nowhere else.
        const held = new Set<string>();
        for (const v of [5, 4, 2]) {
          const record = await store.getVersion('main', v);
          for (const p of packDigests(record ?? {})) {
            const bytes = await store.getObject(p);
            assert.ok(bytes, `pack ${p} of version ${v} is kept`);
            for (const [d] of decodePack(bytes)) held.add(d);
          }
        }
        const loose = await entries(store.listObjects?.());
        for (const v of [1, 3]) {
          for (const d of (snaps[v - 1] as (typeof snaps)[number]).objects.keys())
            if (!kept.has(d)) {
              assert.equal(loose.has(d), false, `object ${d} only version ${v} had is deleted`);
              if (!held.has(d))
                assert.equal(await store.getObject(d), null, `object ${d} only version ${v} had is deleted`);
            }
        }
        const again = await gc(ctx, { keep: 2 });
        assert.deepEqual([again.deletedObjects, again.deletedDocuments, again.spared], [0, 0, 0]);
        assert.deepEqual(again.deletedVersions.main, []);
      },
    );

    withStore('pack-only publish: only the pack is written; every read finds its entries there', async ({ store }) => {
      const services = target.scale?.services ?? 12;
      const first = meshSnapshot(services, 1);
      const r = await publishSnapshot(store, 'main', first, {
        createdAt: CREATED_AT,
        hasher: nodeSha256Hex,
        packOnly: true,
      });
      assert.equal(r.status, 'published');
      if (r.status !== 'published') return;
      assert.equal(r.objectsWritten, first.objects.size, 'its objects were added (to the pack)');
      assert.deepEqual(
        [...(await entries(store.listObjects?.())).keys()],
        packDigests(r.record),
        'no loose object but its pack',
      );
      for (const d of (await entries(store.listDocuments?.())).keys())
        assert.equal(d, r.record.diagnosticsDigest, 'no loose document but the diagnostics');
      assert.equal(
        await store.hasObject([...first.objects.keys()][0] as string),
        false,
        'hasObject asks for loose keys',
      );
      assert.deepEqual(await store.getSnapshot(first.digest), first.content);
      for (const [d, b] of first.objects) assert.deepEqual(plain(await store.getObject(d)), plain(b), `object ${d}`);
      for (const d of first.documents)
        assert.deepEqual(plain(await store.getDocument(d.digest)), plain(d.bytes), `document ${d.digest}`);
      assert.equal((await loadSnapshotPacked(store, r.record, nodeSha256Hex))?.fallbackReads, 0);
      assert.equal(await store.getObject(digestOf(utf8.encode('in no pack'))), null);

      // The next versions (a full build, pack-only by size or not) read back whole, from any mix.
      for (const rev of [2, 3]) {
        const snap = meshSnapshot(services, rev);
        const next = await publishSnapshot(store, 'main', snap, { createdAt: CREATED_AT, hasher: nodeSha256Hex });
        assert.equal(next.status, 'published');
        assert.deepEqual(await store.getSnapshot(snap.digest), snap.content, `version ${rev}`);
        for (const [d, b] of snap.objects) assert.deepEqual(plain(await store.getObject(d)), plain(b), `object ${d}`);
      }
    });

    withStore('uncached(): a reader of what is stored, not of the packs this one holds', async ({ store, rawPut }) => {
      const snap = meshSnapshot(target.scale?.services ?? 12, 1);
      const r = await publishSnapshot(store, 'main', snap, {
        createdAt: CREATED_AT,
        hasher: nodeSha256Hex,
        packOnly: true,
      });
      assert.equal(r.status, 'published');
      if (r.status !== 'published') return;
      const [d, bytes] = [...snap.objects][0] as [string, Uint8Array];
      assert.deepEqual(plain(await store.getObject(d)), plain(bytes), 'read once: its pack is now in memory');
      const pack = packDigests(r.record)[0] as string;
      await rawPut(`objects/sha256/${hex(pack).slice(0, 2)}/${hex(pack)}`, utf8.encode('flipped bits'));
      assert.deepEqual(plain(await store.getObject(d)), plain(bytes), 'this reader answers from the pack it holds');
      const fresh = store.uncached?.();
      assert.ok(fresh, `${target.name} gives an uncached reader`);
      await assert.rejects(fresh.getObject(d), CorruptObjectError, 'the uncached reader reads the corrupt pack');
    });

    withStore('pack-only publish: a pack entry is digest-checked when read', async ({ store }) => {
      const r = await publishSnapshot(store, 'main', nthSnapshot(1), { createdAt: CREATED_AT, hasher: nodeSha256Hex });
      assert.equal(r.status, 'published');
      if (r.status !== 'published') return;
      const claimed = digestOf(utf8.encode('claimed bytes'));
      const pack = encodePack(new Map([[claimed, utf8.encode('other bytes')]]));
      assert.equal(await store.putObject(digestOf(pack), pack), 'created');
      const { schema: _s, channel: _c, version: _v, parent: _p, ...draft } = r.record;
      await store.publish('tampered', {
        ...draft,
        packs: { checkpoint: { digest: digestOf(pack), bytes: pack.byteLength }, deltas: [] },
      });
      await assert.rejects(store.getObject(claimed), CorruptObjectError);
    });

    withStore('pack-only publishes: gc keeps what a kept record reaches, packs included', async ({ store }) => {
      const services = target.scale?.services ?? 12;
      const versions = target.scale?.versions ?? 5;
      const snaps = range(versions).map((rev) => meshSnapshot(services, rev, 3));
      for (const snap of snaps)
        await publishSnapshot(store, 'main', snap, { createdAt: CREATED_AT, hasher: nodeSha256Hex, packOnly: true });
      const ctx = twoHoursLater(store);
      const r = await gc(ctx, { keep: 2 });
      const kept = r.keptVersions.main ?? [];
      assert.deepEqual(kept, [versions, versions - 1]);
      const keptPacks = new Set<string>();
      for (const v of kept) {
        const snap = snaps[v - 1] as (typeof snaps)[number];
        const record = await store.getVersion('main', v);
        assert.ok(record);
        for (const p of packDigests(record)) keptPacks.add(p);
        assert.deepEqual(await store.getSnapshot(record.digest), snap.content, `version ${v} reads back whole`);
        for (const [d, b] of snap.objects)
          assert.deepEqual(plain(await store.getObject(d)), plain(b), `object ${d} of version ${v}`);
      }
      for (const d of (await entries(store.listObjects?.())).keys())
        assert.ok(keptPacks.has(d), `the loose object ${d} is a kept record's pack`);
      const again = await gc(ctx, { keep: 2 });
      assert.deepEqual([again.deletedObjects, again.deletedDocuments, again.spared], [0, 0, 0]);
    });

    withStore(
      'packed stored inputs: carried in packs, read back from them, kept whole by each checkpoint through gc',
      async ({ store }) => {
        const services = target.scale?.services ?? 12;
        // The same small inputs everywhere: the third snapshot below outgrows the checkpoint at every scale.
        const inputs = storedInputsOfDocuments(generateMesh({ services: 12 }).docs, nodeSha256Hex);
        const none: BuiltInputs = { digest: '', objects: new Map(), documents: [], count: 0 };
        const publish = (snap: BuiltSnapshot, added: BuiltInputs) =>
          publishSnapshot(store, 'main', snap, {
            createdAt: CREATED_AT,
            hasher: nodeSha256Hex,
            packOnly: true,
            record: { inputs: inputs.digest },
            packedInputs: { added: () => added, all: () => inputs },
          });
        const first = await publish(meshSnapshot(services, 1), inputs);
        assert.equal(first.status, 'published');
        if (first.status !== 'published') return;
        assert.deepEqual(
          [...(await entries(store.listObjects?.())).keys()],
          packDigests(first.record),
          'no loose input object: only the pack',
        );
        assert.equal(first.objectsWritten, meshSnapshot(services, 1).objects.size + inputs.objects.size);
        const expectInputs = async (what: string): Promise<void> => {
          const docs = await loadStoredInputs(store, inputs.digest);
          assert.equal(docs.length, inputs.count, `${what}: every stored object reads back`);
          for (const [d, b] of inputs.objects)
            assert.deepEqual(plain(await store.getObject(d)), plain(b), `${what}: ${d}`);
          for (const d of inputs.documents)
            assert.deepEqual(plain(await store.getDocument(d.digest)), plain(d.bytes), `${what}: ${d.digest}`);
        };
        await expectInputs('first version');

        // A delta adds nothing of the inputs (its base holds them); then a new checkpoint must hold them all.
        const second = await publish(meshSnapshot(services, 2), none);
        assert.equal(
          second.status === 'published' && second.record.packs?.checkpoint.digest,
          first.record.packs?.checkpoint.digest,
        );
        const third = await publish(meshSnapshot(services * 4, 3), none);
        assert.equal(third.status, 'published');
        if (third.status !== 'published') return;
        assert.notEqual(
          third.record.packs?.checkpoint.digest,
          first.record.packs?.checkpoint.digest,
          'a new checkpoint',
        );
        const r = await gc(twoHoursLater(store), { keep: 1 });
        assert.deepEqual(r.keptVersions.main, [3]);
        assert.equal(await store.getVersion('main', 1), null);
        assert.deepEqual(
          [...(await entries(store.listObjects?.())).keys()].sort(),
          packDigests(third.record).sort(),
          'the old packs are gone',
        );
        await expectInputs('after gc, from the checkpoint alone');
      },
    );
  });
}

async function entries(
  list: AsyncIterable<{ readonly digest: string; readonly modifiedAt: number }> | undefined,
): Promise<Map<string, number>> {
  assert.ok(list, 'the store lists its objects and documents');
  const out = new Map<string, number>();
  for await (const e of list) out.set(e.digest, e.modifiedAt);
  return out;
}

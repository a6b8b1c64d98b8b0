/**
 * Diagnostics live in a content-addressed document beside the snapshot, not in the version
 * record: the record holds its digest and the counts, the same list is one document, and records
 * written before (diagnostics inline) still read. Also: the publish path reads no version record
 * to find the head, and a delta's objects and documents go through putLayered in order.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CompileOutput } from '../../src/compile/types.js';
import type { Diagnostic } from '../../src/model/diagnostics.js';
import { gc } from '../../src/history/gc.js';
import {
  countDiagnostics,
  diagnosticsDocument,
  parseDiagnosticsDocument,
  parseVersionRecord,
  recordDiagnosticCounts,
  recordDiagnostics,
  VERSION_SCHEMA,
} from '../../src/snapshot/manifest.js';
import { SnapshotBuilder } from '../../src/snapshot/build.js';
import { LocalStore, nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { publishSnapshot } from '../../src/snapshot/store/publish.js';
import { cla, edsCluster, INFO, output } from '../snapshot/sample-output.js';
import { CREATED_AT, meshSnapshot, nthSnapshot, tempStoreDir } from './helpers.js';

const DIAGS: Diagnostic[] = [
  {
    severity: 'error',
    code: 'invalid-field',
    message: 'bad weight',
    kind: 'VirtualService',
    namespace: 'default',
    name: 'reviews',
    field: 'spec.http[0].route',
  },
  {
    severity: 'warning',
    code: 'unknown-subset',
    message: 'no such subset',
    kind: 'VirtualService',
    namespace: 'default',
    name: 'ratings',
  },
  { severity: 'info', code: 'unsupported-kind', message: 'ignored', file: 'x.yaml', index: 2 },
];

test('the record holds the diagnostics document digest and counts; equal lists are one document', async () => {
  const store = new LocalStore(tempStoreDir());
  const one = await publishSnapshot(store, 'main', nthSnapshot(1), {
    createdAt: CREATED_AT,
    diagnostics: DIAGS,
    hasher: nodeSha256Hex,
  });
  // The same diagnostics again, as other objects (a new round's list): the same document.
  const two = await publishSnapshot(store, 'main', nthSnapshot(2), {
    createdAt: CREATED_AT,
    diagnostics: DIAGS.map((d) => ({ ...d })),
    hasher: nodeSha256Hex,
  });
  assert.ok(one.status === 'published' && two.status === 'published');
  assert.equal(one.record.diagnostics, undefined, 'no list in the record');
  assert.deepEqual(one.record.diagnosticCounts, { error: 1, warning: 1, info: 1 });
  assert.equal(one.record.diagnosticsDigest, two.record.diagnosticsDigest);
  assert.equal(one.record.diagnosticsDigest, diagnosticsDocument(DIAGS, nodeSha256Hex).digest);
  assert.ok(two.bytesWritten < one.bytesWritten, 'the second publish did not write the document again');

  const stored = (await store.getVersion('main', 2))!;
  assert.deepEqual(await recordDiagnostics(store, stored), DIAGS);
  assert.deepEqual(recordDiagnosticCounts(stored), { error: 1, warning: 1, info: 1 });
  assert.ok(readFileSync(join(store.root, 'channels', 'main', 'versions', '2.json')).byteLength < 2048);

  // Canonical: key order does not matter, list order does.
  const shuffled = DIAGS.map((d) => Object.fromEntries(Object.entries(d).reverse()) as unknown as Diagnostic);
  assert.equal(diagnosticsDocument(shuffled, nodeSha256Hex).digest, one.record.diagnosticsDigest);
  assert.notEqual(diagnosticsDocument([...DIAGS].reverse(), nodeSha256Hex).digest, one.record.diagnosticsDigest);
  const doc = (await store.getDocument(one.record.diagnosticsDigest!))!;
  assert.deepEqual(parseDiagnosticsDocument(doc), DIAGS);
  assert.deepEqual(JSON.parse(new TextDecoder().decode(doc)).schema, 'meshsnap.diagnostics/v1');

  // No diagnostics: still a document (the empty list), counts zero.
  const three = await publishSnapshot(store, 'main', nthSnapshot(3), { createdAt: CREATED_AT, hasher: nodeSha256Hex });
  assert.ok(three.status === 'published');
  assert.deepEqual(three.record.diagnosticCounts, { error: 0, warning: 0, info: 0 });
  assert.deepEqual(await recordDiagnostics(store, three.record), []);
});

test('records with the diagnostics inline (written before diagnostics documents) still read', async () => {
  const store = new LocalStore(tempStoreDir());
  const r = await publishSnapshot(store, 'main', nthSnapshot(1), {
    createdAt: CREATED_AT,
    diagnostics: DIAGS,
    hasher: nodeSha256Hex,
  });
  assert.ok(r.status === 'published');
  const path = join(store.root, 'channels', 'main', 'versions', '1.json');
  const {
    diagnosticsDigest: _d,
    diagnosticCounts: _c,
    ...old
  } = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  writeFileSync(path, JSON.stringify({ ...old, diagnostics: DIAGS }, null, 2));
  const record = (await new LocalStore(store.root).getVersion('main', 1))!;
  assert.equal(record.schema, VERSION_SCHEMA);
  assert.deepEqual(await recordDiagnostics(store, record), DIAGS);
  assert.deepEqual(recordDiagnosticCounts(record), countDiagnostics(DIAGS));
  assert.throws(() => parseVersionRecord({ ...old, diagnostics: 'nope' }), /bad diagnostics/);
  assert.throws(() => parseVersionRecord({ ...old, diagnosticsDigest: 'sha256:nothex' }), /bad diagnosticsDigest/);
});

test('gc keeps the diagnostics document of a kept version and deletes one nothing names', async () => {
  const store = new LocalStore(tempStoreDir());
  await publishSnapshot(store, 'main', nthSnapshot(1), {
    createdAt: CREATED_AT,
    diagnostics: DIAGS.slice(0, 1),
    hasher: nodeSha256Hex,
  });
  const kept = await publishSnapshot(store, 'main', nthSnapshot(2), {
    createdAt: CREATED_AT,
    diagnostics: DIAGS,
    hasher: nodeSha256Hex,
  });
  assert.ok(kept.status === 'published');
  const dropped = diagnosticsDocument(DIAGS.slice(0, 1), nodeSha256Hex).digest;
  const result = await gc(
    { store, channel: 'main', actor: 't', now: () => new Date(), hasher: nodeSha256Hex },
    { keep: 1, graceMs: -60_000 },
  );
  assert.deepEqual(result.deletedVersions, { main: [1] });
  assert.ok(await store.hasDocument(kept.record.diagnosticsDigest!), 'the kept version’s diagnostics are marked');
  assert.equal(await store.hasDocument(dropped), false, 'the dropped version’s diagnostics are swept');
  assert.deepEqual(await recordDiagnostics(store, (await store.getVersion('main', 2))!), DIAGS);
});

/** `services` EDS clusters and their ClusterLoadAssignments in two groups. */
function meshOutput(services: number): CompileOutput {
  const clusters = [];
  const endpoints = [];
  for (let i = 0; i < services; i++) {
    const name = `outbound|80||svc${i}.ns.svc.cluster.local`;
    clusters.push(edsCluster(name));
    endpoints.push(cla(name, [`10.0.${i}.1`]));
  }
  return output({ c: { clusters }, e: { endpoints } }, [
    { id: 'sidecar/ns/_', generator: 'sidecar', namespace: 'ns', services: [], groups: ['c', 'e'] },
  ]);
}

test('finding the head reads no version record; a delta goes through putLayered, objects then layers in order, and its pack too', async () => {
  const root = tempStoreDir();
  const writer = new LocalStore(root);
  await publishSnapshot(writer, 'main', meshSnapshot(40, 1), { createdAt: CREATED_AT, hasher: nodeSha256Hex });

  const store = new LocalStore(root);
  let recordReads = 0;
  const getVersion = store.getVersion.bind(store);
  store.getVersion = async (channel, version) => {
    recordReads++;
    return getVersion(channel, version);
  };
  assert.equal((await store.readChannel('main'))?.version, 1);
  assert.equal(recordReads, 0, 'the head file is the answer');
  // Another writer publishes: probed from the head, and only that record is read.
  await publishSnapshot(writer, 'main', meshSnapshot(40, 2), { createdAt: CREATED_AT, hasher: nodeSha256Hex });
  assert.equal((await store.readChannel('main'))?.version, 2);
  assert.equal(recordReads, 1);

  // A delta (one endpoint moved): one putLayered call, the objects and then each layer.
  const builder = new SnapshotBuilder(INFO, { hasher: nodeSha256Hex });
  builder.build(meshOutput(40));
  await publishSnapshot(store, 'main', builder.snapshot!, { createdAt: CREATED_AT, hasher: nodeSha256Hex });
  const calls: { objects: string[]; layers: string[][] }[] = [];
  const putLayered = store.putLayered.bind(store);
  store.putLayered = async (objects, layers) => {
    calls.push({ objects: [...objects.keys()], layers: layers.map((l) => [...l.keys()]) });
    return putLayered(objects, layers);
  };
  const name = 'outbound|80||svc7.ns.svc.cluster.local';
  const delta = builder.applyDelta({ e: { endpoints: { upserts: new Map([[name, cla(name, ['10.99.0.1'])]]) } } });
  assert.ok(delta.base !== undefined);
  recordReads = 0;
  const r = await publishSnapshot(store, 'main', delta, { createdAt: CREATED_AT, hasher: nodeSha256Hex });
  assert.ok(r.status === 'published');
  assert.equal(r.record.version, 4);
  assert.equal(recordReads, 1, 'the base record, for its packs; none to find the head');
  // The tree in one call; the delta pack (one object, no layers) in another.
  const tree = calls.filter((c) => c.layers.length > 0);
  assert.equal(tree.length, 1);
  assert.deepEqual(tree[0]!.objects, [...delta.objects.keys()]);
  assert.deepEqual(
    tree[0]!.layers.flat(),
    delta.documents.map((d) => d.digest),
    'children before parents',
  );
  assert.deepEqual(tree[0]!.layers.at(-1), [delta.digest], 'the top document last');
  const packs = calls.filter((c) => c.layers.length === 0);
  assert.deepEqual(
    packs.map((c) => c.objects),
    [[r.record.packs!.deltas.at(-1)!.digest]],
    'the delta pack',
  );
  assert.equal(r.documentsWritten, delta.documents.length);
  assert.deepEqual(await store.getSnapshot(delta.digest), delta.content);
  assert.deepEqual((await store.readChannel('main'))?.digest, delta.digest);
  assert.deepEqual(readdirSync(join(root, 'tmp')), [], 'no temp file left');
  // The same files again: found, not written, and freshened.
  assert.deepEqual(await store.putLayered(new Map(), [new Map(delta.documents.map((d) => [d.digest, d.bytes]))]), {
    objects: [],
    documents: [],
  });
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildSnapshot, SnapshotBuilder, snapshotCounts } from '../../src/snapshot/build.js';
import {
  parseSnapshotContent,
  snapshotDigest,
  snapshotDocuments,
  SNAPSHOT_SCHEMA,
} from '../../src/snapshot/content.js';
import { digestOf, isDigest } from '../../src/snapshot/digest.js';
import { ResourceEncoder } from '../../src/snapshot/encoder.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { decodeMessage, type Cluster } from '../../src/xds/proto.js';
import { XDS_TYPE_NAME } from '../../src/xds/type-urls.js';
import { A, B, cla, edsCluster, INFO, output, reversed, sampleOutput } from './sample-output.js';

test('same output in any order gives the same digest and byte-identical objects', () => {
  const one = buildSnapshot(sampleOutput(), INFO);
  const two = buildSnapshot(reversed(sampleOutput()), INFO);
  assert.ok(isDigest(one.digest));
  assert.equal(two.digest, one.digest);
  assert.deepEqual([...two.objects.keys()], [...one.objects.keys()]);
  for (const [digest, bytes] of one.objects) assert.deepEqual(two.objects.get(digest), bytes);
  assert.deepEqual(two.content, one.content);
  assert.deepEqual(two.documents, one.documents);
});

test('the snapshot digest is the hash of the top document, and objects and documents are named by their bytes', () => {
  const snap = buildSnapshot(sampleOutput(), INFO);
  assert.equal(snap.content.schema, SNAPSHOT_SCHEMA);
  const top = snap.documents.at(-1);
  assert.ok(top);
  assert.equal(snap.digest, top.digest);
  assert.equal(snap.digest, digestOf(top.bytes));
  for (const d of snap.documents) assert.equal(digestOf(d.bytes), d.digest);
  assert.deepEqual(
    snapshotDocuments(snap.content),
    { digest: snap.digest, documents: snap.documents },
    'the documents are a function of the expanded content',
  );
  for (const [digest, bytes] of snap.objects) assert.equal(digestOf(bytes), digest);
  const digests = [...snap.objects.keys()];
  assert.deepEqual(digests, [...digests].sort());
  // every digest named in the content is an object, and decodes as its type
  const clusterDigest = snap.content.groups.outbound?.clusters[A];
  assert.ok(clusterDigest);
  const decoded = decodeMessage(XDS_TYPE_NAME.clusters, snap.objects.get(clusterDigest) as Uint8Array) as Cluster;
  assert.equal(decoded.name, A);
  for (const group of Object.values(snap.content.groups))
    for (const table of Object.values(group)) for (const d of Object.values(table)) assert.ok(snap.objects.has(d));
});

test('node:crypto hasher gives the same snapshot as the default hasher', () => {
  const a = buildSnapshot(sampleOutput(), INFO);
  const b = buildSnapshot(sampleOutput(), INFO, { hasher: nodeSha256Hex });
  assert.equal(a.digest, b.digest);
  assert.deepEqual([...a.objects.keys()], [...b.objects.keys()]);
});

test('any change of a resource or of the build info changes the digest', () => {
  const base = buildSnapshot(sampleOutput(), INFO).digest;
  const changed = sampleOutput();
  (changed.groups.get('endpoints')?.endpoints as Map<string, unknown>).set(A, cla(A, ['10.1.0.1']));
  assert.notEqual(buildSnapshot(changed, INFO).digest, base);
  assert.notEqual(buildSnapshot(sampleOutput(), { ...INFO, inputsDigest: 'sha256:' + '1'.repeat(64) }).digest, base);
  assert.notEqual(
    buildSnapshot(sampleOutput(), { ...INFO, compiler: { name: 'meshsnap', version: '9' } }).digest,
    base,
  );
});

test('a message object is encoded once, across groups and across builds', () => {
  const shared = edsCluster(A);
  const make = (endpointsIps: string[]) =>
    output(
      {
        outbound: { clusters: [shared, edsCluster(B)] },
        'grpc-clusters': { clusters: [shared] },
        endpoints: { endpoints: [cla(A, endpointsIps), cla(B, ['10.0.0.2'])] },
      },
      [
        { id: 'sidecar/x/_', generator: 'sidecar', namespace: 'x', services: [], groups: ['outbound', 'endpoints'] },
        { id: 'grpc/x', generator: 'grpc', namespace: 'x', services: [], groups: ['grpc-clusters', 'endpoints'] },
      ],
    );
  const encoder = new ResourceEncoder();
  const first = make(['10.0.0.1']);
  const snap = buildSnapshot(first, INFO, { encoder });
  assert.equal(encoder.encodes, 4); // shared cluster, B, two CLAs
  assert.equal(snap.content.groups.outbound?.clusters[A], snap.content.groups['grpc-clusters']?.clusters[A]);
  assert.equal(snap.objects.size, 4);

  buildSnapshot(first, INFO, { encoder });
  assert.equal(encoder.encodes, 4, 'an unchanged output encodes nothing');

  const next = make(['10.0.0.9']); // `shared` reused, the rest are new objects
  buildSnapshot(next, INFO, { encoder });
  assert.equal(encoder.encodes, 4 + 3);
});

test('counts are distinct resources per type', () => {
  const snap = buildSnapshot(sampleOutput(), INFO);
  const counts = snapshotCounts(snap.content);
  // A and B appear in both outbound and grpc-clusters with the same bytes: counted once.
  // two different `virtualInbound` listeners: counted twice.
  assert.deepEqual(counts, {
    clusters: 6,
    endpoints: 3,
    listeners: 5,
    routes: 2,
    classes: 3,
    objects: snap.objects.size,
  });
});

test('content survives a JSON round trip and is checked when read back', () => {
  const snap = buildSnapshot(sampleOutput(), INFO);
  const back = parseSnapshotContent(JSON.parse(JSON.stringify(snap.content)));
  assert.deepEqual(back, snap.content);
  assert.equal(snapshotDigest(back), snap.digest);
  assert.throws(() => parseSnapshotContent({ ...snap.content, schema: 'other' }), /schema/);
  assert.throws(
    () =>
      parseSnapshotContent({
        ...snap.content,
        groups: { g: { clusters: { x: 'nope' }, endpoints: {}, listeners: {}, routes: {} } },
      }),
    /bad digest/,
  );
});

test('classes and selectors are stored sorted and as plain copies', () => {
  const snap = buildSnapshot(reversed(sampleOutput()), INFO);
  assert.deepEqual(
    snap.content.classes.map((c) => c.id),
    ['grpc/default', 'sidecar/default/_', 'sidecar/default/a'],
  );
  assert.deepEqual(
    snap.content.selectors.map((s) => s.hostname),
    ['a.default.svc.cluster.local', 'b.default.svc.cluster.local'],
  );
});

test("a full build's content, read only after deltas were applied, is still that build's", () => {
  const expected = buildSnapshot(sampleOutput(), INFO).content;
  const builder = new SnapshotBuilder(INFO);
  const full = builder.build(sampleOutput());
  const delta = builder.applyDelta({ endpoints: { endpoints: { upserts: new Map([[A, cla(A, ['10.9.9.9'])]]) } } });
  // Read in the order a lazy chain finds hardest: the delta first, then the full build under it.
  assert.notEqual(delta.content.groups.endpoints?.endpoints[A], expected.groups.endpoints?.endpoints[A]);
  assert.deepEqual(full.content, expected);
  assert.deepEqual(Object.keys(full.content.groups), Object.keys(expected.groups), 'groups in the same order');
  assert.deepEqual(delta.content, builder.snapshot?.content);
});

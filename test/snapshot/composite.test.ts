/**
 * Large route configs stored as composite objects (src/snapshot/composite.ts, route-chunks.ts):
 * what a proxy is served stays byte for byte the plain encoding.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { ProxyClass } from '../../src/compile/types.js';
import { gc } from '../../src/history/gc.js';
import { loadServedSnapshot } from '../../src/relay/snapshot/load.js';
import { SnapshotBuilder, buildSnapshot } from '../../src/snapshot/build.js';
import {
  COMPOSITE_MAGIC,
  compositeBytes,
  compositeParts,
  InvalidCompositeError,
  isComposite,
  materialize,
  resourceBytes,
} from '../../src/snapshot/composite.js';
import { digestOf } from '../../src/snapshot/digest.js';
import { COMPOSITE_ROUTES_MIN_BYTES, ResourceEncoder } from '../../src/snapshot/encoder.js';
import { LocalStore, nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { loadSnapshotPacked } from '../../src/snapshot/store/packs.js';
import { publishSnapshot } from '../../src/snapshot/store/publish.js';
import { CorruptObjectError } from '../../src/snapshot/store/store.js';
import { encodeMessage, type RouteConfiguration, type VirtualHost } from '../../src/xds/proto.js';
import { TypeName } from '../../src/xds/type-urls.js';
import { INFO, output, staticCluster, type TableSpec } from './sample-output.js';

const SERVICES = 600;
const NAMESPACES = 20;
const host = (i: number): string => `svc-${i}.ns-${i % NAMESPACES}.svc.cluster.local`;
const cluster = (i: number): string => `outbound|8080||${host(i)}`;

function vhost(i: number, clientNs: number | undefined): VirtualHost {
  const own = clientNs === i % NAMESPACES;
  const domains = [host(i), `${host(i)}:8080`, ...(own ? [`svc-${i}`, `svc-${i}:8080`] : [])];
  return {
    name: `${host(i)}:8080`,
    domains,
    routes: [{ name: 'default', match: { prefix: '/' }, route: { cluster: cluster(i), timeout: { seconds: 0 } } }],
    include_request_attempt_count: true,
  };
}

/**
 * Sidecar-like route configs `8080`, one per client namespace: shared virtual host objects except
 * for the client namespace's own services (as src/compile/routes.ts builds them). `fresh`: no
 * object shared at all (every config built from scratch).
 */
function meshOutput(opts: { fresh?: boolean; order?: 'forward' | 'reverse' } = {}) {
  const shared = Array.from({ length: SERVICES }, (_, i) => vhost(i, undefined));
  const groups: Record<string, TableSpec> = {
    outbound: {
      clusters: [
        ...Array.from({ length: SERVICES }, (_, i) => staticCluster(cluster(i))),
        staticCluster('PassthroughCluster'),
      ],
    },
  };
  const classes: ProxyClass[] = [];
  const namespaces = Array.from({ length: NAMESPACES }, (_, n) => n);
  if (opts.order === 'reverse') namespaces.reverse();
  for (const ns of namespaces) {
    const vhosts = Array.from({ length: SERVICES }, (_, i) =>
      i % NAMESPACES === ns ? vhost(i, ns) : opts.fresh ? vhost(i, undefined) : (shared[i] as VirtualHost),
    );
    vhosts.push({
      name: 'allow_any',
      domains: ['*'],
      routes: [{ name: 'allow_any', match: { prefix: '/' }, route: { cluster: 'PassthroughCluster' } }],
    });
    const rc: RouteConfiguration = {
      name: '8080',
      virtual_hosts: vhosts,
      validate_clusters: { value: false },
      ignore_port_in_host_matching: true,
    };
    groups[`routes/ns-${ns}`] = { routes: [rc] };
    classes.push({
      id: `sidecar/ns-${ns}/_`,
      generator: 'sidecar',
      namespace: `ns-${ns}`,
      services: [],
      groups: ['outbound', `routes/ns-${ns}`],
    });
  }
  return output(groups, classes);
}

const plain = (rc: RouteConfiguration): Uint8Array => encodeMessage(TypeName.RouteConfiguration, rc);
/** Byte equality whatever the Uint8Array subclass (Buffer or not). */
const sameBytes = (actual: Uint8Array | null | undefined, expected: Uint8Array): void => {
  assert.ok(actual, 'bytes present');
  assert.equal(
    Buffer.compare(
      Buffer.from(actual.buffer, actual.byteOffset, actual.byteLength),
      Buffer.from(expected.buffer, expected.byteOffset, expected.byteLength),
    ),
    0,
    'same bytes',
  );
};
const served = (objects: ReadonlyMap<string, Uint8Array>, digest: string): Uint8Array => {
  const bytes = objects.get(digest) as Uint8Array;
  const parts = compositeParts(bytes);
  if (!parts) return bytes;
  return Buffer.concat(parts.map((p) => objects.get(p) as Uint8Array));
};

test('a large route config is stored as a composite whose parts concatenate to its exact protobuf encoding', () => {
  const out = meshOutput();
  const snap = buildSnapshot(out, INFO, { hasher: nodeSha256Hex });
  let partsSeen = 0;
  for (const [id, table] of out.groups) {
    const rc = table.routes.get('8080');
    if (!rc) continue;
    const digest = snap.content.groups[id]?.routes['8080'] as string;
    const stored = snap.objects.get(digest) as Uint8Array;
    assert.ok(plain(rc).length >= COMPOSITE_ROUTES_MIN_BYTES, 'the sample is large enough to be a composite');
    assert.ok(isComposite(stored), `${id}: stored as a composite`);
    const parts = compositeParts(stored) as string[];
    partsSeen += parts.length;
    for (const p of parts) assert.ok(snap.objects.has(p), `part ${p} is among the snapshot's objects`);
    sameBytes(served(snap.objects, digest), plain(rc));
    // Its digest is the stored bytes' digest: the hash over its parts' digests, after the magic.
    assert.equal(digest, digestOf(stored, nodeSha256Hex));
    sameBytes(stored, compositeBytes(parts));
  }
  // Namespaces share most chunks: a chunk differs in a namespace only where one of its own services
  // is (each service is "own" in one namespace), so distinct parts stay far below configs × chunks.
  const distinctParts = new Set<string>();
  for (const [id] of out.groups)
    if (id.startsWith('routes/'))
      for (const p of compositeParts(
        snap.objects.get(snap.content.groups[id]?.routes['8080'] as string) as Uint8Array,
      ) as string[])
        distinctParts.add(p);
  assert.ok(distinctParts.size < partsSeen / 2, `${distinctParts.size} distinct parts of ${partsSeen}`);
  assert.equal(snap.counts.routes, NAMESPACES);
  assert.equal(snap.counts.objects, NAMESPACES + SERVICES + 1, 'counts are resources, not parts');
});

test('a composite digest depends on the content only: object sharing, insertion order and encoder do not change it', () => {
  const a = buildSnapshot(meshOutput(), INFO, { hasher: nodeSha256Hex });
  const b = buildSnapshot(meshOutput({ fresh: true, order: 'reverse' }), INFO, { hasher: nodeSha256Hex });
  const c = buildSnapshot(meshOutput(), INFO); // @noble/hashes: the same SHA-256
  assert.equal(b.digest, a.digest);
  assert.equal(c.digest, a.digest);
  assert.deepEqual([...b.objects.keys()], [...a.objects.keys()]);
  for (const [d, bytes] of a.objects) sameBytes(b.objects.get(d), bytes);
  // A second build with a warm encoder gives the same again.
  const encoder = new ResourceEncoder(nodeSha256Hex);
  const out = meshOutput();
  assert.equal(buildSnapshot(out, INFO, { encoder }).digest, a.digest);
  assert.equal(buildSnapshot(out, INFO, { encoder }).digest, a.digest);
});

test('a delta that changes one virtual host stores the changed parts and composite only, with the digest of a full build', () => {
  const builder = new SnapshotBuilder(INFO, { hasher: nodeSha256Hex });
  const base = builder.build(meshOutput());
  const changed = meshOutput();
  const rc = changed.groups.get('routes/ns-1')?.routes.get('8080') as RouteConfiguration;
  const vhosts = [...(rc.virtual_hosts ?? [])];
  vhosts[7] = { ...(vhosts[7] as VirtualHost), domains: ['changed.example'] };
  const next: RouteConfiguration = { ...rc, virtual_hosts: vhosts };
  changed.groups.get('routes/ns-1')?.routes.set('8080', next);
  const delta = builder.applyDelta({ 'routes/ns-1': { routes: { upserts: new Map([['8080', next]]) } } });
  assert.equal(delta.digest, buildSnapshot(changed, INFO, { hasher: nodeSha256Hex }).digest);
  const digest = delta.content.groups['routes/ns-1']?.routes['8080'] as string;
  assert.ok(delta.objects.has(digest));
  assert.ok(
    delta.objects.size <= 3,
    `${delta.objects.size} new objects: the composite and the one or two chunks around the change`,
  );
  const all = new Map([...base.objects, ...delta.objects]);
  sameBytes(served(all, digest), plain(next));
});

test('a full build after a delta lists every composite and part again, byte-identical to a fresh build', () => {
  const builder = new SnapshotBuilder(INFO, { hasher: nodeSha256Hex });
  const out = meshOutput();
  builder.build(out);
  const rc = out.groups.get('routes/ns-3')?.routes.get('8080') as RouteConfiguration;
  const vhosts = [...(rc.virtual_hosts ?? [])];
  vhosts[11] = { ...(vhosts[11] as VirtualHost), domains: ['changed.example'] };
  const next: RouteConfiguration = { ...rc, virtual_hosts: vhosts };
  builder.applyDelta({ 'routes/ns-3': { routes: { upserts: new Map([['8080', next]]) } } });
  out.groups.get('routes/ns-3')?.routes.set('8080', next);
  // The builder holds digests, not bytes: the unchanged composites and their parts are encoded again.
  const full = builder.build(out);
  const expected = buildSnapshot(out, INFO, { hasher: nodeSha256Hex });
  assert.equal(full.digest, expected.digest);
  assert.deepEqual([...full.objects.keys()], [...expected.objects.keys()]);
  for (const [digest, bytes] of expected.objects) sameBytes(full.objects.get(digest), bytes);
  sameBytes(served(full.objects, expected.content.groups['routes/ns-3']?.routes['8080'] as string), plain(next));
});

test('stored composites round-trip through a store, the relay and packs; a corrupt part is refused on read', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'meshsnap-composite-'));
  try {
    const out = meshOutput();
    const snap = buildSnapshot(out, INFO, { hasher: nodeSha256Hex });
    const store = new LocalStore(join(dir, '.meshsnap'));
    // Loose keys too (packOnly: false), so that one part can rot on disk below.
    await publishSnapshot(store, 'main', snap, {
      createdAt: '2026-01-01T00:00:00Z',
      hasher: nodeSha256Hex,
      packOnly: false,
    });
    const head = await store.readChannel('main');
    assert.ok(head);
    const digest = snap.content.groups['routes/ns-2']?.routes['8080'] as string;
    const want = plain(out.groups.get('routes/ns-2')?.routes.get('8080') as RouteConfiguration);
    sameBytes(await resourceBytes((d) => store.getObject(d), digest), want);

    // The relay, from packs (cold start) and from single objects (a switch from a previous snapshot).
    const record = await store.getVersion('main', head.version);
    assert.ok(record?.packs);
    const packed = await loadSnapshotPacked(store, record, nodeSha256Hex);
    sameBytes(packed?.objects.get(digest), want);
    const loaded = await loadServedSnapshot(store, 'main', head);
    sameBytes(loaded.resources('sidecar/ns-2/_', 'routes')?.get('8080')?.bytes, want);

    // gc keeps the parts a kept composite names (everything is old enough to be collected).
    const t = new Date(Date.now() - 2 * 3_600_000);
    for (const name of readdirSync(store.root, { recursive: true }) as string[])
      if (statSync(join(store.root, name)).isFile()) utimesSync(join(store.root, name), t, t);
    await gc({ store, channel: 'main', actor: 'test', now: () => new Date(), hasher: nodeSha256Hex }, { keep: 1 });
    sameBytes(await resourceBytes((d) => store.getObject(d), digest), want);

    // Bit rot in one part: reading the resource fails rather than serve different bytes.
    const part = (compositeParts((await store.getObject(digest)) as Uint8Array) as string[])[3] as string;
    writeFileSync(store.objectPath(part), 'bit rot');
    await assert.rejects(
      resourceBytes((d) => store.getObject(d), digest),
      CorruptObjectError,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('composite form: plain bytes pass through, malformed composites and missing or nested parts are errors', async () => {
  const a = Uint8Array.of(0x0a, 0x01, 0x41);
  const b = Uint8Array.of(0x12, 0x00);
  const objects = new Map<string, Uint8Array>([
    [digestOf(a), a],
    [digestOf(b), b],
  ]);
  const read = async (d: string) => objects.get(d) ?? null;
  assert.equal(compositeParts(a), null);
  assert.equal(await materialize(read, digestOf(a), a), a);
  const both = compositeBytes([digestOf(a), digestOf(b), digestOf(a)]);
  assert.deepEqual([...both.subarray(0, COMPOSITE_MAGIC.length)], [...COMPOSITE_MAGIC]);
  sameBytes(
    await materialize(read, digestOf(both), both),
    Uint8Array.of(0x0a, 0x01, 0x41, 0x12, 0x00, 0x0a, 0x01, 0x41),
  );
  assert.throws(() => compositeParts(both.subarray(0, both.length - 1)), InvalidCompositeError);
  const missing = compositeBytes([digestOf(Uint8Array.of(1))]);
  await assert.rejects(materialize(read, digestOf(missing), missing), /is missing/);
  objects.set(digestOf(both), both);
  const nested = compositeBytes([digestOf(both)]);
  await assert.rejects(materialize(read, digestOf(nested), nested), /itself a composite/);
});

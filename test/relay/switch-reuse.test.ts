/**
 * A switch reuses what did not change: documents the served snapshot already expanded are not read
 * again, type maps over the very same tables are taken over as they are, and what the relay serves
 * is exactly what a cold load of the same version serves; response bodies of unchanged maps are
 * taken over too.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { loadServedSnapshot } from '../../src/relay/snapshot/load.js';
import { LoadedSnapshot } from '../../src/relay/snapshot/served-snapshot.js';
import { SNAPSHOT_SCHEMA } from '../../src/snapshot/content.js';
import { LocalStore } from '../../src/snapshot/store/local.js';
import { XDS_TYPES } from '../../src/xds/type-urls.js';
import { decodeMessage } from '../../src/xds/proto.js';
import { encodeSotwBody, withNonce, type SotwBody } from '../../src/relay/xds/responses.js';
import { frameOf, messageOf } from '../../src/relay/xds/grpc-frames.js';
import { MSG } from '../../src/relay/xds/services.js';
import { SotwCache, WILDCARD_KEY } from '../../src/relay/xds/sotw-cache.js';
import { BOOKINFO_NODES, publishSet, tempDir } from './store-fixture.js';

const tmp = tempDir();
after(() => tmp.remove());

/** Every class's served (name, digest) pairs and version per type. */
function served(s: LoadedSnapshot): Record<string, Record<string, { version: string; pairs: string[] }>> {
  const out: Record<string, Record<string, { version: string; pairs: string[] }>> = {};
  for (const id of s.classIds) {
    out[id] = {};
    for (const type of XDS_TYPES) {
      const pairs = [...(s.resources(id, type) ?? new Map()).values()].map((r) => `${r.name} ${r.digest}`);
      (out[id] as Record<string, unknown>)[type] = { version: s.typeVersion(id, type), pairs };
    }
  }
  return out;
}

/** A store that counts document reads. */
function counting(root: string): { store: LocalStore; reads: () => number } {
  const store = new LocalStore(root);
  let n = 0;
  const get = store.getDocument.bind(store);
  store.getDocument = (d) => {
    n++;
    return get(d);
  };
  return { store, reads: () => n };
}

/** A served snapshot that shares nothing: a load on top of it reads every document (and not the packs, as a cold start does). */
const nothingServed = (): LoadedSnapshot =>
  new LoadedSnapshot({
    channel: 'main',
    version: 0,
    digest: 'none',
    content: {
      schema: SNAPSHOT_SCHEMA,
      compiler: { name: 'none', version: '0' },
      inputsDigest: '',
      groups: {},
      classes: [],
      selectors: [],
    },
    objects: new Map(),
  });

test('a switch reads only changed documents and serves what a full load serves', { timeout: 60_000 }, async () => {
  const root = join(tmp.dir, 'store');
  const writer = new LocalStore(root);
  const relay = counting(root);
  let previous = await loadServedSnapshot(relay.store, 'main', await publishSet(writer, 'base'));

  for (const next of ['reviews50', 'reviewsV3', 'base'] as const) {
    const head = await publishSet(writer, next);
    const before = relay.reads();
    const switched = await loadServedSnapshot(relay.store, 'main', head, { previous });
    const switchReads = relay.reads() - before;

    const full = counting(root);
    const fullLoad = await loadServedSnapshot(full.store, 'main', head, { previous: nothingServed() });
    assert.deepEqual(served(switched), served(fullLoad), `${next}: the switch serves what a full load serves`);
    assert.ok(
      switchReads < full.reads() / 2,
      `${next}: the switch read ${switchReads} documents, a full load ${full.reads()}`,
    );

    // Only routes changed: every class's endpoint and cluster maps are the previous ones, as they are.
    for (const id of switched.classIds) {
      assert.equal(switched.resources(id, 'endpoints'), previous.resources(id, 'endpoints'), `${next}: ${id}`);
      assert.equal(switched.resources(id, 'clusters'), previous.resources(id, 'clusters'), `${next}: ${id}`);
    }
    assert.notDeepEqual(served(switched), served(previous), `${next}: something changed`);

    // The classes did not change: a stream's node keeps its placement, not classified again.
    for (const node of Object.values(BOOKINFO_NODES)) {
      const placed = previous.classify(node);
      assert.equal(switched.classify(node), placed, `${next}: ${node.id}`);
      assert.deepEqual(fullLoad.classify(node), placed, `${next}: ${node.id} as a full load places it`);
    }
    previous = switched;
  }
});

test(
  'response bodies: one per resources map, shared by its classes, taken over by a switch that keeps the map',
  { timeout: 60_000 },
  async () => {
    const root = join(tmp.dir, 'bodies');
    const writer = new LocalStore(root);
    const reader = new LocalStore(root);
    const base = await loadServedSnapshot(reader, 'main', await publishSet(writer, 'base'));
    const next = await loadServedSnapshot(reader, 'main', await publishSet(writer, 'reviews50'), { previous: base });
    const before = new SotwCache(base, '1');
    const after = new SotwCache(next, '2', before);
    const fresh = new SotwCache(next, '3');

    const ids = next.classIds;
    assert.ok(ids.length > 1);
    // Streams were served from the cache of the snapshot before.
    const old = new Map(ids.flatMap((id) => XDS_TYPES.map((t) => [`${id} ${t}`, before.body(id, t, WILDCARD_KEY)])));
    for (const type of XDS_TYPES) {
      const bodies = new Map<ReadonlyMap<string, unknown> | undefined, SotwBody>();
      for (const id of ids) {
        const body = after.body(id, type, WILDCARD_KEY);
        // Exactly what a cache without a past encodes.
        const cold = fresh.body(id, type, WILDCARD_KEY);
        assert.deepEqual(
          [body.version, body.contentKey, Buffer.from(body.prefix)],
          [cold.version, cold.contentKey, Buffer.from(cold.prefix)],
        );
        const map = next.resources(id, type);
        const shared = bodies.get(map);
        if (shared) assert.equal(body, shared, `${id} ${type}: classes with the same map share its body`);
        bodies.set(map, body);
        const was = old.get(`${id} ${type}`);
        if (map === base.resources(id, type)) assert.equal(body, was, `${id} ${type}: an unchanged map keeps its body`);
        else assert.notEqual(body.version, was?.version, `${id} ${type}: a changed map gets a new body`);
      }
    }
    // Routes changed (a VirtualService), clusters did not: both cases were seen.
    assert.ok(ids.some((id) => next.resources(id, 'routes') !== base.resources(id, 'routes')));
    assert.ok(ids.every((id) => next.resources(id, 'clusters') === base.resources(id, 'clusters')));
    // A subscription by name is its own body, also shared.
    const id = ids[0] as string;
    const names = [...(next.resources(id, 'clusters') ?? new Map()).keys()].slice(0, 2).sort().join('\n');
    assert.equal(after.body(id, 'clusters', names), after.body(id, 'clusters', names));
    assert.equal(after.body(id, 'clusters', names).count, 2);
  },
);

test('withNonce: the body and the nonce decode as one DiscoveryResponse, short or long nonce', () => {
  const body = encodeSotwBody('type.googleapis.com/envoy.config.cluster.v3.Cluster', 'v1', [], 'k');
  for (const nonce of ['1', 'zz9', 'n'.repeat(127), 'ñ'.repeat(100)]) {
    const decoded = decodeMessage(MSG.Response, withNonce(body.prefix, nonce)) as {
      nonce: string;
      version_info: string;
    };
    assert.deepEqual([decoded.nonce, decoded.version_info], [nonce, 'v1']);
  }
});

test('pushFrame: a body with the switch nonce, framed once per body and cache; an empty nonce is refused', async () => {
  const root = join(tmp.dir, 'push-bytes');
  const snapshot = await loadServedSnapshot(
    new LocalStore(root),
    'main',
    await publishSet(new LocalStore(root), 'base'),
  );
  const cache = new SotwCache(snapshot, 'p7');
  const id = snapshot.classIds[0] as string;
  const body = cache.body(id, 'clusters', WILDCARD_KEY);
  const frame = cache.pushFrame(body);
  assert.equal(cache.pushFrame(body), frame, 'every stream writes the very same buffer');
  assert.deepEqual(messageOf(frame), withNonce(body.prefix, 'p7'));
  assert.deepEqual(frame, frameOf(withNonce(body.prefix, 'p7')));
  assert.notEqual(new SotwCache(snapshot, 'p8', cache).pushFrame(body), frame, 'the next switch has its own nonce');
  assert.throws(() => new SotwCache(snapshot, ''), /must not be empty/);
});

/**
 * History operations on a bookinfo history: diff (reviews-v3 → reviews-50-v3 is exactly the
 * route weight change), rollback with moved pods serves the NEW endpoints, tags, verify on every
 * version, pins with candidates and promote, the audit trail.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { auditTrail } from '../../src/history/audit.js';
import { readChannelState } from '../../src/history/channel-state.js';
import { diffVersions, formatVersionDiff } from '../../src/history/diff/index.js';
import { inputsOf } from '../../src/history/layers.js';
import { pin, unpin } from '../../src/history/pin.js';
import { pinnedRound } from '../../src/history/pinned-round.js';
import { promote } from '../../src/history/promote.js';
import { rollback } from '../../src/history/rollback.js';
import { selectVersion } from '../../src/history/select.js';
import { tag } from '../../src/history/tag.js';
import { verifyVersion } from '../../src/history/verify.js';
import { storedDocument } from '../../src/snapshot/stored-inputs/index.js';
import { parseDocuments } from '../../src/inputs/parse.js';
import { compileTexts } from '../../src/pipeline.js';
import { resourcesForClass } from '../../src/snapshot/classify.js';
import { nodeSha256Hex, type LocalStore } from '../../src/snapshot/store/local.js';
import { resourceToJson } from '../../src/xds/json.js';
import { XDS_TYPE_NAME } from '../../src/xds/type-urls.js';
import { compileAndPublish, context, movedState, sample, STATE, tempStore } from './helpers.js';

let store: LocalStore;
let cleanup: () => void;
before(async () => {
  ({ store, cleanup } = tempStore());
  assert.equal(await compileAndPublish(store, STATE, ['virtual-service-reviews-v3.yaml']), 1);
  assert.equal(await compileAndPublish(store, STATE, ['virtual-service-reviews-50-v3.yaml']), 2);
  assert.equal(await compileAndPublish(store, movedState(250), ['virtual-service-reviews-50-v3.yaml']), 3);
});
after(() => cleanup());

/** Every endpoint address a version serves. */
async function endpointIps(version: string): Promise<Set<string>> {
  const record = await selectVersion(store, 'main', version);
  const content = await store.getSnapshot(record.digest);
  assert.ok(content);
  const ips = new Set<string>();
  for (const c of content.classes) {
    for (const digest of resourcesForClass(content, c.id)?.endpoints.values() ?? []) {
      const text = JSON.stringify(
        resourceToJson(XDS_TYPE_NAME.endpoints, (await store.getObject(digest)) as Uint8Array),
      );
      for (const m of text.matchAll(/"address":"(10\.[0-9.]+)"/g)) ips.add(m[1] as string);
    }
  }
  return ips;
}

test('diff reviews-v3 → reviews-50-v3: only the reviews route changes, and only the VirtualService input', async () => {
  const d = await diffVersions(store, await selectVersion(store, 'main', '1'), await selectVersion(store, 'main', '2'));
  assert.ok(d.classes.length > 0);
  for (const c of d.classes) {
    assert.deepEqual(Object.keys(c.types), ['routes'], `${c.classA}: ${JSON.stringify(c.types)}`);
    const routes = c.types.routes;
    assert.ok(routes);
    assert.deepEqual([routes.added, routes.removed], [[], []]);
    for (const r of routes.changed) {
      assert.ok(r.fields.length > 0);
      for (const f of r.fields)
        assert.match(
          f.path,
          /^virtual_hosts\[reviews\.default\.svc\.cluster\.local:9080\]\.routes\[0\]\.(route|decorator)\./,
          f.path,
        );
    }
  }
  const pp = d.classes.find((c) => c.classA?.startsWith('sidecar/default/') && c.classA.includes('productpage'));
  assert.ok(pp, 'the productpage class is in the diff');
  const fields = pp.types.routes?.changed.find((r) => r.name === '9080')?.fields ?? [];
  const paths = fields.map((f) => `${f.change} ${f.path.replace(/^.*\.routes\[0\]\./, '')}`).sort();
  // The destination became a 50/50 split (istiod also names the decorator after the VS host then).
  assert.deepEqual(paths, ['added route.weighted_clusters', 'changed decorator.operation', 'removed route.cluster']);
  const weighted = fields.find((f) => f.change === 'added')?.to as { clusters: { name: string; weight: number }[] };
  assert.deepEqual(
    weighted.clusters.map((c) => [c.name, c.weight]),
    [
      ['outbound|9080|v1|reviews.default.svc.cluster.local', 50],
      ['outbound|9080|v3|reviews.default.svc.cluster.local', 50],
    ],
  );
  assert.deepEqual(
    d.inputs?.map((i) => [i.change, i.kind, i.namespace, i.name, i.layer]),
    [['changed', 'VirtualService', '', 'reviews', 'config']], // the sample has no namespace: as written
  );
  assert.ok(d.inputs?.[0]?.fields?.every((f) => f.path.startsWith('spec.http[0].route')));
  const text = formatVersionDiff(d);
  assert.match(text, /routes ~ 9080/);
  assert.match(text, /~ VirtualService default\/reviews \[config\]/);
  assert.match(text, /7 classes sidecar\/default\/_, /);
});

test('diff of a weight change names the weighted cluster and shows old → new', async () => {
  const { store: s, cleanup: done } = tempStore();
  try {
    await compileAndPublish(s, STATE, ['virtual-service-reviews-80-20.yaml']);
    await compileAndPublish(s, STATE, ['virtual-service-reviews-90-10.yaml']);
    const d = await diffVersions(s, await selectVersion(s, 'main', '1'), await selectVersion(s, 'main', '2'), {
      types: ['routes'],
    });
    const changes = new Set(
      d.classes.flatMap(
        (c) =>
          c.types.routes?.changed.flatMap((r) =>
            r.fields.map((f) => `${f.path}: ${JSON.stringify(f.from)} → ${JSON.stringify(f.to)}`),
          ) ?? [],
      ),
    );
    assert.deepEqual([...changes].sort(), [
      'virtual_hosts[reviews.default.svc.cluster.local:9080].routes[0].route.weighted_clusters.clusters[outbound|9080|v1|reviews.default.svc.cluster.local].weight: 80 → 90',
      'virtual_hosts[reviews.default.svc.cluster.local:9080].routes[0].route.weighted_clusters.clusters[outbound|9080|v2|reviews.default.svc.cluster.local].weight: 20 → 10',
    ]);
  } finally {
    done();
  }
});

test('rollback to 1 after the pods moved: config of 1, endpoints of the current version, pinned, recorded', async () => {
  const before3 = await endpointIps('3');
  assert.ok(
    [...before3].every((ip) => ip.startsWith('10.250.')),
    [...before3].join(),
  );
  const r = await rollback(context(store, { reason: 'bad canary' }), '1');
  assert.equal(r.version, 4);
  assert.equal(r.result.status, 'published');
  const rec = await selectVersion(store, 'main', 'latest');
  assert.deepEqual(rec.origin, { kind: 'rollback', from: 1 });
  assert.equal(rec.actor, 'alice');
  assert.equal(rec.reason, 'bad canary');
  // Served endpoints are the NEW ones; no pod IP of version 1 comes back.
  assert.deepEqual(await endpointIps('4'), before3);
  // Config layer of 1, endpoint layer of 3.
  const [i1, i3, i4] = await Promise.all(
    ['1', '3', '4'].map(async (v) => inputsOf(store, await selectVersion(store, 'main', v))),
  );
  assert.deepEqual(i4?.config, i1?.config);
  assert.deepEqual(i4?.endpoints, i3?.endpoints);
  // Routes are version 1's again.
  const d = await diffVersions(store, await selectVersion(store, 'main', '1'), rec, {
    types: ['routes', 'clusters', 'listeners'],
  });
  assert.deepEqual(d.classes, []);
  const { state } = await readChannelState(store, 'main');
  assert.equal(state.pin?.version, 4);
  assert.equal(state.pin?.actor, 'alice');
});

test('tags select versions as tag:NAME and NAME', async () => {
  const ctx = context(store);
  assert.equal(await tag(ctx, '2', 'abc1234'), 2);
  assert.equal((await selectVersion(store, 'main', 'tag:abc1234')).version, 2);
  assert.equal((await selectVersion(store, 'main', 'abc1234')).version, 2);
  await assert.rejects(selectVersion(store, 'main', 'nope'), /no tag/);
  await assert.rejects(tag(ctx, '2', '42'), /bad tag name/);
});

test('while pinned: endpoints follow on the pinned config, config changes become candidates; promote serves one', async () => {
  const objectsOf = (state: string, vs: string) =>
    [{ file: 'state.yaml', text: state }, sample('destination-rule-all.yaml'), sample(vs)].flatMap((f) =>
      parseDocuments(f.text, f.file).docs.flatMap((d) => storedDocument(d.object, nodeSha256Hex) ?? []),
    );
  const compile = (state: string, vs: string) =>
    compileTexts([{ file: 'state.yaml', text: state }, sample('destination-rule-all.yaml'), sample(vs)], {
      hasher: nodeSha256Hex,
    });
  // The cluster now runs 80-20 with pods moved again.
  const c = compile(movedState(251), 'virtual-service-reviews-80-20.yaml');
  const round = await pinnedRound({
    store,
    channel: 'main',
    objects: objectsOf(movedState(251), 'virtual-service-reviews-80-20.yaml'),
    snapshot: c.snapshot,
    diagnostics: c.diagnostics,
    createdAt: new Date().toISOString(),
    hasher: nodeSha256Hex,
  });
  assert.ok(round);
  assert.equal(round.pinnedVersion, 4);
  assert.equal(round.candidate?.status, 'published');
  assert.equal(round.served.status, 'published');
  const served = await selectVersion(store, 'main', 'latest');
  assert.equal(served.version, 5);
  assert.deepEqual(served.origin, { kind: 'pinned', from: 4 });
  assert.ok([...(await endpointIps('5'))].every((ip) => ip.startsWith('10.251.')));
  assert.deepEqual(
    (await diffVersions(store, await selectVersion(store, 'main', '4'), served, { types: ['routes'] })).classes,
    [],
  );
  const cand = await selectVersion(store, 'main', 'candidate:1');
  assert.equal(cand.status, 'candidate');
  assert.equal(cand.digest, c.snapshot.digest);
  assert.notEqual((await store.readChannel('main'))?.digest, cand.digest, 'the head never points at a candidate');

  // The same config again records no second candidate.
  const again = await pinnedRound({
    store,
    channel: 'main',
    objects: objectsOf(movedState(251), 'virtual-service-reviews-80-20.yaml'),
    snapshot: c.snapshot,
    diagnostics: c.diagnostics,
    createdAt: new Date().toISOString(),
  });
  assert.equal(again?.candidate, undefined);
  assert.equal(again?.served.status, 'unchanged');

  const p = await promote(context(store, { actor: 'bob' }), 'candidate:1');
  assert.equal(p.version, 6);
  const promoted = await selectVersion(store, 'main', 'latest');
  assert.deepEqual(promoted.origin, { kind: 'promote', from: 'candidate:1' });
  assert.equal(promoted.digest, cand.digest, 'same config and endpoints as the candidate → same snapshot');
  assert.equal((await readChannelState(store, 'main')).state.pin?.version, 6);

  // The config the pin holds is the promoted one now: that round is not diverged any more.
  assert.equal(
    await pinnedRound({
      store,
      channel: 'main',
      objects: objectsOf(movedState(251), 'virtual-service-reviews-80-20.yaml'),
      snapshot: c.snapshot,
      diagnostics: c.diagnostics,
      createdAt: new Date().toISOString(),
    }),
    null,
  );
  assert.equal((await unpin(context(store)))?.version, 6);
  assert.equal(
    await pinnedRound({
      store,
      channel: 'main',
      objects: objectsOf(STATE, 'virtual-service-reviews-v3.yaml'),
      snapshot: c.snapshot,
      diagnostics: c.diagnostics,
      createdAt: new Date().toISOString(),
    }),
    null,
  );
  // pin keeps what is served: version 2's config is not the served one, and pinning it is refused.
  await assert.rejects(
    pin(context(store), '2'),
    /version 2's config is not the one served \(version 6\).*meshsnap rollback 2/,
  );
  assert.equal((await readChannelState(store, 'main')).state.pin, undefined);
  await pin(context(store));
  assert.equal((await readChannelState(store, 'main')).state.pin?.version, 6);
  await unpin(context(store));
});

test('verify: every version of the history (compiles, rollback, pinned round, promotion, candidate) recompiles byte-identically', async () => {
  const versions = await store.listVersions('main');
  assert.ok(versions.length >= 6);
  for (const n of versions) {
    const r = await verifyVersion(store, await selectVersion(store, 'main', String(n)), nodeSha256Hex);
    assert.ok(r.ok, `version ${n}: ${r.reasons.join('; ')}`);
  }
  assert.ok((await verifyVersion(store, await selectVersion(store, 'main', 'candidate:1'))).ok);
  const other = await verifyVersion(store, await selectVersion(store, 'main', '1'), nodeSha256Hex, {
    name: 'meshsnap',
    version: '9.9.9',
  });
  assert.ok(other.ok, 'same digest whatever version string the running compiler has (the recompile records its own)');
});

test('audit trail: publishes with origin, rollback, pins, tag, promote with who and why', async () => {
  const events = await auditTrail(store, { channel: 'main' });
  const kinds = events.map((e) => e.kind);
  for (const k of ['publish', 'candidate', 'rollback', 'pin', 'unpin', 'tag', 'promote'])
    assert.ok(kinds.includes(k), `${k} in ${kinds.join()}`);
  const rb = events.find((e) => e.kind === 'rollback');
  assert.equal(rb?.actor, 'alice');
  assert.equal(rb?.reason, 'bad canary');
  assert.equal(events.find((e) => e.kind === 'promote')?.actor, 'bob');
  const sorted = [...events].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  assert.deepEqual(events, sorted);
  assert.deepEqual(
    await auditTrail(store, { channel: 'main', proxy: 'sidecar~1.2.3.4~x.default~default.svc.cluster.local' }),
    [],
  );
});

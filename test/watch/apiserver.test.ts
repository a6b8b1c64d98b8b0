/**
 * The fake kube-apiserver itself, over plain HTTP: discovery and served group-versions, list and
 * get, watch replay/live/bookmarks/timeouts, expiry (410 as status and in-stream) and faults.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type FakeApiServer, type KubeObject, startFakeApiServer, until } from '../helpers/fake-apiserver.js';

const pod = (ns: string, name: string, labels: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: ns, labels },
  spec: { containers: [{ name: 'app', image: 'app:1' }] },
});
const vs = (ns: string, name: string, host: string): KubeObject => ({
  apiVersion: 'networking.istio.io/v1',
  kind: 'VirtualService',
  metadata: { name, namespace: ns },
  spec: { hosts: [host], http: [{ route: [{ destination: { host } }] }] },
});

async function getJson(s: FakeApiServer, path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await fetch(s.url + path);
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

interface Event {
  type: string;
  object: KubeObject & { code?: number };
}

/** Opens a watch and collects events until `count` arrived or the stream ended. */
async function watchEvents(
  s: FakeApiServer,
  path: string,
  count: number,
  timeoutMs = 3000,
): Promise<{ status: number; events: Event[]; ended: boolean }> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), timeoutMs);
  const r = await fetch(s.url + path, { signal: ac.signal });
  const events: Event[] = [];
  let ended = false;
  if (r.status !== 200) {
    clearTimeout(timer);
    await r.body?.cancel();
    return { status: r.status, events, ended: true };
  }
  const reader = r.body!.getReader();
  const dec = new TextDecoder();
  let buf = '';
  try {
    while (events.length < count) {
      const { done, value } = await reader.read();
      if (done) {
        ended = true;
        break;
      }
      buf += dec.decode(value, { stream: true });
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        events.push(JSON.parse(buf.slice(0, nl)) as Event);
        buf = buf.slice(nl + 1);
      }
    }
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
  return { status: r.status, events, ended };
}

describe('fake apiserver: discovery and served group-versions', () => {
  let s: FakeApiServer;
  before(async () => {
    s = await startFakeApiServer({ notServed: ['networking.istio.io/v1'] });
  });
  after(() => s.close());

  it('serves /api, /api/v1, /apis and group documents', async () => {
    assert.deepEqual((await getJson(s, '/api')).body.versions, ['v1']);
    const core = (await getJson(s, '/api/v1')).body.resources as { name: string; namespaced: boolean }[];
    for (const p of ['services', 'endpoints', 'pods', 'namespaces', 'nodes', 'configmaps'])
      assert.ok(
        core.some((r) => r.name === p),
        p,
      );
    assert.equal(core.find((r) => r.name === 'nodes')?.namespaced, false);
    const groups = (await getJson(s, '/apis')).body.groups as { name: string; preferredVersion: { version: string } }[];
    assert.ok(groups.some((g) => g.name === 'discovery.k8s.io'));
    assert.equal(groups.find((g) => g.name === 'networking.istio.io')?.preferredVersion.version, 'v1beta1');
    assert.equal((await getJson(s, '/apis/networking.istio.io/v1')).status, 404);
    assert.equal((await getJson(s, '/apis/networking.istio.io/v1/virtualservices')).status, 404);
    const v1b1 = (await getJson(s, '/apis/networking.istio.io/v1beta1')).body.resources as { name: string }[];
    assert.deepEqual(v1b1.map((r) => r.name).sort(), ['destinationrules', 'gateways', 'virtualservices']);
  });

  it('adds and removes group-versions at runtime, with their CRD objects', async () => {
    s.addGroupVersion('networking.istio.io/v1');
    let groups = (await getJson(s, '/apis')).body.groups as { name: string; preferredVersion: { version: string } }[];
    assert.equal(groups.find((g) => g.name === 'networking.istio.io')?.preferredVersion.version, 'v1');
    assert.equal((await getJson(s, '/apis/networking.istio.io/v1/virtualservices')).status, 200);
    for (const v of ['v1', 'v1beta1', 'v1alpha3']) s.removeGroupVersion(`networking.istio.io/${v}`);
    groups = (await getJson(s, '/apis')).body.groups as typeof groups;
    assert.ok(!groups.some((g) => g.name === 'networking.istio.io'));
    assert.equal((await getJson(s, '/apis/networking.istio.io')).status, 404);
    assert.deepEqual(s.objects('CustomResourceDefinition'), []);
    s.addGroupVersion('networking.istio.io/v1alpha3');
    const crds = (await getJson(s, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions')).body
      .items as KubeObject[];
    assert.deepEqual(crds.map((c) => c.metadata.name).sort(), [
      'destinationrules.networking.istio.io',
      'gateways.networking.istio.io',
      'virtualservices.networking.istio.io',
    ]);
  });
});

describe('fake apiserver: list, get and watch', () => {
  let s: FakeApiServer;
  before(async () => {
    s = await startFakeApiServer({
      objects: [pod('shop', 'web-1', { app: 'web' }), pod('shop', 'db-1', { app: 'db' }), pod('ops', 'x', {})],
      bookmarkIntervalMs: 0,
    });
  });
  after(() => s.close());

  it('lists with a resourceVersion on the list and on every item; built-in items carry no kind', async () => {
    const { body } = await getJson(s, '/api/v1/pods');
    assert.equal(body.kind, 'PodList');
    assert.equal((body.metadata as { resourceVersion: string }).resourceVersion, String(s.resourceVersion()));
    const items = body.items as KubeObject[];
    assert.equal(items.length, 3);
    for (const i of items) {
      assert.match(i.metadata.resourceVersion!, /^\d+$/);
      assert.equal(i.kind, undefined);
    }
    const ns = (await getJson(s, '/api/v1/namespaces/shop/pods?labelSelector=app%3Dweb')).body.items as KubeObject[];
    assert.deepEqual(
      ns.map((p) => p.metadata.name),
      ['web-1'],
    );
    const byField = (await getJson(s, '/api/v1/pods?fieldSelector=metadata.namespace%3Dops')).body
      .items as KubeObject[];
    assert.deepEqual(
      byField.map((p) => p.metadata.name),
      ['x'],
    );
    assert.equal((await getJson(s, '/api/v1/namespaces/shop/nodes')).status, 404);
  });

  it('serves a custom resource in every served version, and single objects by name', async () => {
    s.apply(vs('shop', 'web', 'web.shop.svc.cluster.local'));
    const l = (await getJson(s, '/apis/networking.istio.io/v1beta1/namespaces/shop/virtualservices')).body
      .items as KubeObject[];
    assert.equal(l[0]?.apiVersion, 'networking.istio.io/v1beta1');
    assert.equal(l[0]?.kind, 'VirtualService');
    const one = await getJson(s, '/apis/networking.istio.io/v1alpha3/namespaces/shop/virtualservices/web');
    assert.equal(one.body.apiVersion, 'networking.istio.io/v1alpha3');
    assert.equal((await getJson(s, '/apis/networking.istio.io/v1/namespaces/shop/virtualservices/nope')).status, 404);
  });

  it('bumps one global resourceVersion; an unchanged apply is a no-op', () => {
    const rv = s.resourceVersion();
    const a = s.apply(pod('shop', 'web-2'));
    assert.equal(a.metadata.resourceVersion, String(rv + 1));
    assert.equal(s.apply(pod('shop', 'web-2')).metadata.resourceVersion, String(rv + 1));
    assert.equal(s.resourceVersion(), rv + 1);
  });

  it('replays events after a resourceVersion, then streams live ones', async () => {
    const from = s.resourceVersion();
    s.apply(pod('shop', 'web-3'));
    s.apply(pod('shop', 'web-3', { v: '2' }));
    const pending = watchEvents(s, `/api/v1/namespaces/shop/pods?watch=true&resourceVersion=${from}`, 4);
    await s.nextRequest('watch=true');
    setImmediate(() => {
      s.delete('Pod', 'shop', 'web-3');
      s.apply(pod('ops', 'not-in-shop'));
      s.apply(pod('shop', 'web-4'));
    });
    const { events } = await pending;
    assert.deepEqual(
      events.map((e) => `${e.type} ${e.object.metadata.name}`),
      ['ADDED web-3', 'MODIFIED web-3', 'DELETED web-3', 'ADDED web-4'],
    );
    assert.equal(events[0]?.object.kind, 'Pod');
    const rvs = events.map((e) => Number(e.object.metadata.resourceVersion));
    assert.deepEqual(
      [...rvs].sort((a, b) => a - b),
      rvs,
    );
  });

  it('resourceVersion 0 starts with synthetic ADDED events for what exists', async () => {
    const { events } = await watchEvents(s, '/api/v1/namespaces/ops/pods?watch=true&resourceVersion=0', 2);
    assert.deepEqual(events.map((e) => `${e.type} ${e.object.metadata.name}`).sort(), ['ADDED not-in-shop', 'ADDED x']);
  });

  it('sends BOOKMARKs only when allowed, and honours timeoutSeconds', async () => {
    const rv = s.resourceVersion();
    const pending = watchEvents(
      s,
      `/api/v1/nodes?watch=true&resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=1`,
      5,
    );
    await s.nextRequest('allowWatchBookmarks');
    s.apply(pod('shop', 'other-kind'));
    s.bookmark();
    const { events, ended } = await pending;
    assert.ok(ended, 'the stream ended at timeoutSeconds');
    assert.equal(events.length, 1);
    assert.equal(events[0]?.type, 'BOOKMARK');
    assert.equal(events[0]?.object.metadata.resourceVersion, String(rv + 1));
  });
});

describe('fake apiserver: expiry and faults', () => {
  let s: FakeApiServer;
  let t: FakeApiServer;
  before(async () => {
    s = await startFakeApiServer({ historyLimit: 3 });
    t = await startFakeApiServer({ expiredWatch: 'status' });
  });
  after(async () => {
    await s.close();
    await t.close();
  });

  it('expires resourceVersions older than the retained history: in-stream ERROR 410 by default', async () => {
    const from = s.resourceVersion();
    for (let i = 0; i < 4; i++) s.apply(pod('a', `p${i}`));
    const r = await watchEvents(s, `/api/v1/pods?watch=true&resourceVersion=${from}`, 2);
    assert.equal(r.status, 200);
    assert.ok(r.ended);
    assert.equal(r.events.length, 1);
    assert.equal(r.events[0]?.type, 'ERROR');
    assert.equal(r.events[0]?.object.code, 410);
    const ok = await watchEvents(s, `/api/v1/pods?watch=true&resourceVersion=${from + 1}`, 3);
    assert.deepEqual(
      ok.events.map((e) => e.object.metadata.name),
      ['p1', 'p2', 'p3'],
    );
  });

  it('answers HTTP 410 with a Status when configured; compact() expires everything older', async () => {
    const rv = t.resourceVersion();
    t.apply(pod('a', 'p'));
    t.compact();
    const r = await fetch(`${t.url}/api/v1/pods?watch=true&resourceVersion=${rv}`);
    assert.equal(r.status, 410);
    const body = (await r.json()) as { kind: string; code: number; reason: string };
    assert.deepEqual([body.kind, body.code, body.reason], ['Status', 410, 'Expired']);
    const live = await watchEvents(
      t,
      `/api/v1/pods?watch=true&resourceVersion=${t.resourceVersion()}&timeoutSeconds=1`,
      1,
    );
    assert.equal(live.status, 200);
  });

  it('injects failures on matching requests only, and delays', async () => {
    t.failNext(2, '/api/v1/services');
    assert.equal((await getJson(t, '/api/v1/pods')).status, 200);
    const failed = await getJson(t, '/api/v1/services');
    assert.deepEqual([failed.status, failed.body.kind, failed.body.code], [500, 'Status', 500]);
    assert.equal((await getJson(t, '/api/v1/services')).status, 500);
    assert.equal((await getJson(t, '/api/v1/services')).status, 200);
    t.delay(150, /\/nodes/);
    const t0 = Date.now();
    await getJson(t, '/api/v1/nodes');
    assert.ok(Date.now() - t0 >= 140);
    t.clearFaults();
    assert.deepEqual(
      t.requests.filter((r) => r.path === '/api/v1/services').map((r) => r.status),
      [500, 500, 200],
    );
  });

  it('ends watches cleanly, drops them abruptly; close() does not wait for clients', async () => {
    const ended = watchEvents(t, `/api/v1/pods?watch=true&resourceVersion=${t.resourceVersion()}`, 1);
    await until(() => t.openWatches().length === 1, 2000, 'a watch');
    assert.equal(t.endWatches(), 1);
    assert.deepEqual(await ended, { status: 200, events: [], ended: true });
    await until(() => t.openWatches().length === 0, 2000, 'no watch');
    const dropped = watchEvents(t, `/api/v1/nodes?watch=true&resourceVersion=${t.resourceVersion()}`, 1);
    await until(() => t.openWatches().length === 1, 2000, 'a watch');
    assert.equal(t.dropWatches(), 1);
    await assert.rejects(dropped, /terminated/);
    const open = watchEvents(t, `/api/v1/pods?watch=true&resourceVersion=${t.resourceVersion()}`, 1, 5000);
    await until(() => t.openWatches().length === 1, 2000, 'a watch');
    const t0 = Date.now();
    await t.close();
    await assert.rejects(open);
    assert.ok(Date.now() - t0 < 1000);
  });
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateMesh, seededRandom } from '../../bench/synthetic.js';
import { compile } from '../../src/compile/index.js';
import { labelsKey } from '../../src/compile/labels.js';
import { perCompile } from '../../src/compile/per-compile.js';
import type { CompileContext } from '../../src/compile/context.js';
import { NameOrderedTable, sortedByName, sortShortStrings } from '../../src/compile/sorted.js';
import { istioMutualTlsContext, istioMutualTransportSocket } from '../../src/compile/tls.js';
import { DomainDeduper } from '../../src/compile/route/domains.js';
import { translateRouteMatch } from '../../src/compile/route/match.js';
import { translateRetry } from '../../src/compile/route/retry.js';
import { buildInputSet } from '../../src/inputs/index.js';
import type { HTTPMatchRequest, HTTPRetry } from '../../src/model/istio.js';
import { encodeMessage, takePackedMessage, type ClusterLoadAssignment } from '../../src/xds/proto.js';
import { TypeName } from '../../src/xds/type-urls.js';

const codeUnitOrder = (names: readonly string[]): string[] => [...names].sort();

test('NameOrderedTable hands out names in code unit order, whatever order they came in', () => {
  const rand = seededRandom(7);
  const names: string[] = [];
  for (let i = 0; i < 400; i++) {
    const port = [80, 443, 8080, 9090, 10000][Math.floor(rand() * 5)];
    const subset = ['', 'v1', 'v2', 'canary'][Math.floor(rand() * 4)];
    names.push(
      `outbound|${port}|${subset}|svc-${Math.floor(rand() * 1000)}.ns-${Math.floor(rand() * 7)}.svc.cluster.local`,
    );
  }
  names.push('PassthroughCluster', 'BlackHoleCluster', 'InboundPassthroughClusterIpv4', 'a|b~', 'a|b|c');
  for (const order of [names, codeUnitOrder(names), codeUnitOrder(names).reverse()]) {
    const table = new NameOrderedTable<string>();
    for (const n of order) table.add(n, n);
    assert.deepEqual([...table.toMap().keys()], codeUnitOrder([...new Set(names)]));
  }
});

test('NameOrderedTable: add keeps the first value of a name, set the last', () => {
  const table = new NameOrderedTable<number>();
  table.add('outbound|80||a', 1);
  table.add('outbound|80||a', 2);
  table.set('outbound|80||b', 1);
  table.set('outbound|80||b', 2);
  assert.deepEqual(
    [...table.toMap()],
    [
      ['outbound|80||a', 1],
      ['outbound|80||b', 2],
    ],
  );
});

test('sortedByName keeps a map that is in order and sorts one that is not', () => {
  const inOrder = new Map([
    ['a', 1],
    ['b', 2],
  ]);
  assert.equal(sortedByName(inOrder), inOrder);
  assert.deepEqual(
    [
      ...sortedByName(
        new Map([
          ['b', 2],
          ['a', 1],
        ]),
      ).keys(),
    ],
    ['a', 'b'],
  );
});

test('labelsKey: one key per label set, whatever the key order; distinct sets never collide', () => {
  assert.equal(labelsKey({ app: 'x', version: 'v1' }), labelsKey({ version: 'v1', app: 'x' }));
  assert.equal(labelsKey({}), '');
  const sets: Record<string, string>[] = [
    { ab: 'c' },
    { a: 'bc' },
    { a: 'b', c: '' },
    { 'a:b': 'c' },
    { a: 'b:c' },
    { '1:a': '' },
    { a: '' },
  ];
  assert.equal(new Set(sets.map(labelsKey)).size, sets.length);
});

test('the Istio mTLS socket writes its SNI in place: the same bytes as encoding the whole context', () => {
  for (const sni of [
    '',
    'outbound_.8080_._.svc-1.ns-0.svc.cluster.local',
    `outbound_.80_._.${'x'.repeat(300)}`,
    'ü.example',
  ]) {
    // A list met again (the same array, or an equal one) reuses its kept bytes: each is asked twice.
    const sanLists = [
      ['spiffe://cluster.local/ns/ns-0/sa/default'],
      [],
      ['spiffe://cluster.local/ns/ns-0/sa/a', 'spiffe://cluster.local/ns/ns-0/sa/b'],
      [`spiffe://cluster.local/ns/ns-0/sa/${'y'.repeat(200)}`],
      ['spiffe://cluster.local/ns/ns-0/sa/default'],
    ];
    for (const subjectAltNames of [...sanLists, ...sanLists]) {
      for (const http2 of [false, true]) {
        const opts = { sni, subjectAltNames, http2 };
        const socket = istioMutualTransportSocket(opts);
        const packed = socket.typed_config?.value as Uint8Array;
        const whole = istioMutualTlsContext(opts);
        assert.deepEqual(
          Buffer.from(packed),
          Buffer.from(encodeMessage(TypeName.UpstreamTlsContext, whole)),
          `${sni} ${subjectAltNames.join(',')} ${http2}`,
        );
        // The message handed to the acceptance check is the one the bytes encode.
        assert.deepEqual(takePackedMessage(socket.typed_config as object), whole);
      }
    }
  }
});

test('subset clusters hold the very LbEndpoints of their main cluster, frozen', () => {
  const output = compile(buildInputSet(generateMesh({ services: 60, seed: 3 }).docs)).output;
  // Assignments that depend on the proxy's locality are in the locality groups (`endpoints@`: what a proxy of none gets).
  const endpoints = new Map([
    ...(output.groups.get('endpoints')?.endpoints ?? []),
    ...(output.groups.get('endpoints@')?.endpoints ?? []),
  ]);
  const lbs = (cla: ClusterLoadAssignment | undefined) => (cla?.endpoints ?? []).flatMap((l) => l.lb_endpoints ?? []);
  let subsets = 0;
  for (const [name, cla] of endpoints) {
    const [, port, subset, host] = name.split('|');
    if (!subset) continue;
    const main = new Set(lbs(endpoints.get(`outbound|${port}||${host}`)));
    for (const ep of lbs(cla)) {
      assert.ok(main.has(ep), `${name}: an endpoint of the main cluster`);
      assert.ok(Object.isFrozen(ep) && Object.isFrozen(ep.endpoint), name);
    }
    subsets++;
  }
  assert.ok(subsets > 0, 'the mesh has subset clusters');
});

test('a route match is translated once per source match and flag: frozen, equal to a fresh translation', () => {
  const matches: HTTPMatchRequest[] = [
    { uri: { prefix: '/api/' }, headers: { 'x-canary': { exact: 'true' } } },
    {
      uri: { exact: '/a' },
      ignoreUriCase: true,
      withoutHeaders: { 'x-b': { regex: 'b.*' } },
      method: { exact: 'GET' },
    },
    { uri: { regex: '/r/.*' }, queryParams: { q: { exact: '1' } } },
    {},
  ];
  for (const match of matches)
    for (const gatewaySemantics of [false, true]) {
      const first = translateRouteMatch(match, gatewaySemantics);
      assert.equal(translateRouteMatch(match, gatewaySemantics), first);
      assert.ok(Object.isFrozen(first));
      // A copy of the source is not known yet: translated anew, it gives an equal match.
      assert.deepEqual(translateRouteMatch(structuredClone(match), gatewaySemantics), first);
    }
  assert.equal(translateRouteMatch(undefined), translateRouteMatch(undefined));
  assert.deepEqual(translateRouteMatch(undefined), { prefix: '/' });
  // Gateway API semantics change a prefix: the two flags are kept apart.
  const prefix: HTTPMatchRequest = { uri: { prefix: '/foo/' } };
  assert.equal(translateRouteMatch(prefix, false).prefix, '/foo/');
  assert.equal(translateRouteMatch(prefix, true).path_separated_prefix, '/foo');
});

test('a retry policy is translated once per source retries and hash flag: frozen, equal to a fresh translation', () => {
  const retries: HTTPRetry[] = [
    { attempts: 3, perTryTimeoutMs: 2000, retryOn: 'gateway-error,503' },
    { attempts: 1, retryRemoteLocalities: true },
  ];
  for (const retry of retries)
    for (const consistentHash of [false, true]) {
      const first = translateRetry(retry, consistentHash);
      assert.equal(translateRetry(retry, consistentHash), first);
      assert.ok(Object.isFrozen(first));
      assert.deepEqual(translateRetry({ ...retry }, consistentHash), first);
    }
  assert.notDeepEqual(translateRetry(retries[0], false), translateRetry(retries[0], true));
  assert.equal(translateRetry({ attempts: 0 }, false), undefined);
});

test('DomainDeduper.keepShared keeps what keep keeps, and gives the list itself when all of it is new', () => {
  const rand = seededRandom(11);
  const pool = ['a.ns', 'A.ns', 'b.ns', 'c', '10.0.0.1', 'b.NS', 'd.ns.svc', '[::1]'];
  for (let round = 0; round < 200; round++) {
    const lists = Array.from({ length: 4 }, () =>
      Array.from({ length: Math.floor(rand() * 5) }, () => pool[Math.floor(rand() * pool.length)] as string),
    );
    const reference = new DomainDeduper();
    const shared = new DomainDeduper();
    for (const list of lists) {
      const kept = shared.keepShared(list);
      assert.deepEqual([...kept], reference.keep(list), JSON.stringify(lists));
      if (kept.length === list.length) assert.equal(kept, list);
    }
  }
});

test('sortShortStrings gives what sort() gives', () => {
  const rand = seededRandom(5);
  const pool = ['a', 'B', 'b', 'ab', 'a-b', '', 'é', '😀', 'ﬀ', 'Z9', 'version', 'app', 'pod-template-hash'];
  for (let round = 0; round < 300; round++) {
    const list = Array.from({ length: Math.floor(rand() * 8) }, () => pool[Math.floor(rand() * pool.length)] as string);
    assert.deepEqual(sortShortStrings([...list]), [...list].sort(), JSON.stringify(list));
  }
});

test('perCompile makes a value once per compile context and again for another', () => {
  let made = 0;
  const value = perCompile(() => ({ n: ++made }));
  const a = {} as CompileContext;
  const b = {} as CompileContext;
  assert.equal(value(a), value(a));
  assert.equal(made, 1);
  assert.notEqual(value(b), value(a));
  assert.equal(made, 2);
});

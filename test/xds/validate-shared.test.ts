/**
 * The validator on what the compiler shares: a sidecar's route config exists once per client
 * namespace, with the same virtual host objects in each. Domain uniqueness is checked against the
 * last clean config of the same name (src/xds/validate/domains-unique.ts) and a clean virtual host
 * is walked once (Validator's shared types). Neither may hide a violation: every case compares
 * with a fresh validator, which checks the config alone and in full.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { queryObjects } from 'node:v8';
import rules from '../../src/xds/gen/validate-rules.js';
import { deepFreeze } from '../../src/compile/intern.js';
import type { Cluster, Listener, RouteConfiguration, VirtualHost } from '../../src/xds/proto.js';
import { TypeName } from '../../src/xds/type-urls.js';
import {
  ENVOY_RULES,
  validateResource,
  Validator,
  type MessageHook,
  type Violation,
} from '../../src/xds/validate/index.js';
import { domainClashes, forgetDomainBases } from '../../src/xds/validate/domains-unique.js';

const RC = TypeName.RouteConfiguration;
const VH = 'envoy.config.route.v3.VirtualHost';
const rulesOf = (vs: readonly Violation[]): string[] => vs.map((v) => `${v.path} ${v.rule}`);
const alone = (rc: RouteConfiguration): Violation[] => new Validator(rules, ENVOY_RULES).validate(RC, rc);

const host = (name: string, domains: string[]): VirtualHost => ({
  name,
  domains,
  routes: [{ match: { prefix: '/' }, route: { cluster: `outbound|80||${name}` } }],
});
/** 200 services' virtual hosts as seen from another namespace: FQDN forms only. */
const shared = Array.from({ length: 200 }, (_, i) =>
  host(`svc-${i}.ns-${i % 4}.svc.cluster.local:80`, [`svc-${i}.ns-${i % 4}.svc.cluster.local`, `svc-${i}.ns-${i % 4}`]),
);
/** The config of one client namespace: `own` replaces the shared host at the same index. */
const config = (
  name: string,
  own: ReadonlyMap<number, VirtualHost>,
  extra: VirtualHost[] = [],
): RouteConfiguration => ({
  name,
  virtual_hosts: [...shared.map((h, i) => own.get(i) ?? h), ...extra],
});
/** A namespace's own view of a service: its short name is a domain too. */
const ownHost = (i: number, ...more: string[]): VirtualHost =>
  host(`svc-${i}.ns-${i % 4}.svc.cluster.local:80`, [...(shared[i]?.domains as string[]), `svc-${i}`, ...more]);

test('domain uniqueness against a clean config of the same name: the same violations as a check of the config alone', () => {
  const v = new Validator(rules, ENVOY_RULES);
  const nsOf = (ns: number): Map<number, VirtualHost> => new Map([0, 4, 8].map((i) => [i + ns, ownHost(i + ns)]));
  // The first namespace's config becomes the basis of "80"; the others share all but their own hosts.
  for (let ns = 0; ns < 4; ns++) {
    const rc = config('80', nsOf(ns));
    assert.deepEqual(v.validate(RC, rc), [], `namespace ${ns}`);
  }
  const cases: [string, RouteConfiguration][] = [
    // A new host with a domain of a shared host that the config also has.
    ['a clash with a kept host', config('80', nsOf(1), [host('x', ['SVC-7.ns-3'])])],
    // Two new hosts clashing with each other.
    ['a clash between new hosts', config('80', nsOf(2), [host('x', ['x.example']), host('y', ['X.example'])])],
    // The same shared object twice clashes with itself.
    ['a host given twice', config('80', nsOf(3), [shared[150] as VirtualHost])],
    // A new host's domain clashing with a domain inside its own list.
    ['a domain twice in one host', config('80', new Map([[5, ownHost(5, 'svc-5')]]))],
  ];
  for (const [what, rc] of cases) {
    const expected = alone(rc);
    assert.ok(
      expected.some((x) => x.rule === 'envoy.virtual_host.domains_unique'),
      `${what}: the case clashes`,
    );
    assert.deepEqual(v.validate(RC, rc), expected, what);
  }
});

test('domain uniqueness: a domain of a basis host the config does not have is free to take', () => {
  domainClashes('9080', shared);
  // svc-3's host is replaced by the namespace's own view; a new host takes the old one's domains.
  const hosts = shared.map((h, i) => (i === 3 ? host('elsewhere', ['other.example']) : h));
  hosts.push(host('svc-3-moved', shared[3]?.domains as string[]));
  assert.deepEqual(domainClashes('9080', hosts), []);
  assert.deepEqual(alone({ name: '9080', virtual_hosts: hosts }), []);
});

test('a clean shared virtual host is walked once; a broken one is reported in every config that has it', () => {
  let walked = 0;
  const counting: MessageHook = () => void walked++;
  const v = new Validator(rules, { ...ENVOY_RULES, [VH]: counting }, new Set([VH]));
  const good = host('good', ['good.example']);
  const bad: VirtualHost = { name: 'bad', domains: [], routes: [] };
  const a: RouteConfiguration = { name: 'a', virtual_hosts: [good, bad] };
  const b: RouteConfiguration = { name: 'b', virtual_hosts: [bad, good] };
  assert.deepEqual(rulesOf(v.validate(RC, a)), ['virtual_hosts[1].domains repeated.min_items']);
  assert.equal(walked, 2);
  assert.deepEqual(rulesOf(v.validate(RC, b)), ['virtual_hosts[0].domains repeated.min_items']);
  assert.equal(walked, 3, 'only the broken host is walked again');
  assert.deepEqual(rulesOf(v.validate(RC, { ...b })), ['virtual_hosts[0].domains repeated.min_items']);
});

const LISTENER = 'envoy.config.listener.v3.Listener';
const CHAIN = 'envoy.config.listener.v3.FilterChain';
type Chain = NonNullable<Listener['filter_chains']>[number];

const chain = (name: string, port: number): Chain => ({
  name,
  filter_chain_match: { destination_port: { value: port } },
  filters: [{ name: 'envoy.filters.network.tcp_proxy' }],
});
const inbound = (...chains: Chain[]): Listener => ({
  name: 'virtualInbound',
  address: { socket_address: { address: '0.0.0.0', port_value: 15006 } },
  filter_chains: chains,
});

test('a clean frozen filter chain is walked once; a broken frozen one is reported in every listener that holds it; an unfrozen one is walked each time', () => {
  const walked = new Map<string, number>();
  const counting: MessageHook = (m) => void walked.set(m.name as string, (walked.get(m.name as string) ?? 0) + 1);
  const v = new Validator(rules, { ...ENVOY_RULES, [CHAIN]: counting }, new Set(), new Set([CHAIN]));
  const shared = deepFreeze(chain('shared', 8080));
  // destination_port is uint32 lte 65535: broken, and frozen (shared) all the same.
  const broken = deepFreeze(chain('broken', 70000));
  const own = (): Chain => chain('own', 9090);
  const listeners = Array.from({ length: 3 }, () => inbound(shared, own(), broken));
  const expected = ['filter_chains[2].filter_chain_match.destination_port uint32.lte'];
  for (const [i, l] of listeners.entries()) {
    assert.deepEqual(rulesOf(v.validate(LISTENER, l)), expected, `listener ${i}`);
    assert.deepEqual(
      v.validate(LISTENER, l),
      new Validator(rules, ENVOY_RULES).validate(LISTENER, l),
      `listener ${i} alone`,
    );
  }
  assert.equal(walked.get('shared'), 1, 'the clean frozen chain is walked once');
  assert.equal(walked.get('broken'), 3, 'the broken frozen chain is walked (and reported) for every listener');
  assert.equal(walked.get('own'), 3, 'unfrozen chains are not remembered');
  // The same frozen chain at another position is still reported with its own path.
  assert.deepEqual(rulesOf(v.validate(LISTENER, inbound(broken))), [
    'filter_chains[0].filter_chain_match.destination_port uint32.lte',
  ]);
});

test('the process validator remembers frozen filter chains, listener filters and transport sockets: a broken one is still reported in every listener', () => {
  // A transport socket needs a name.
  const tls = deepFreeze({ name: '' });
  const broken = deepFreeze({ ...chain('broken-socket', 8443), transport_socket: tls });
  const a = inbound(deepFreeze(chain('ok', 8080)), broken);
  const b = inbound(broken);
  const violationsOf = (l: Listener): string[] => rulesOf(validateResource('listeners', l));
  const expectedA = violationsOf(a);
  assert.ok(
    expectedA.some((r) => r.startsWith('filter_chains[1].transport_socket')),
    `the socket is broken: ${expectedA.join('; ')}`,
  );
  assert.deepEqual(
    violationsOf(b),
    expectedA.map((r) => r.replace('filter_chains[1]', 'filter_chains[0]')),
  );
  assert.deepEqual(violationsOf({ ...a }), expectedA);
});

test('a broken frozen part shared by clusters (outlier detection, a socket match) is reported in every cluster that holds it', () => {
  // enforcing_consecutive_5xx is a percentage (uint32 lte 100); a transport socket needs a name.
  const outlier = deepFreeze({ consecutive_5xx: { value: 5 }, enforcing_consecutive_5xx: { value: 101 } });
  const plaintext = deepFreeze({ name: 'tlsMode-disabled', match: {}, transport_socket: { name: '' } });
  const ok = deepFreeze({ thresholds: [{ max_connections: { value: 100 } }] });
  const cluster = (name: string): Cluster => ({
    name,
    type: 3,
    connect_timeout: { seconds: 1 },
    circuit_breakers: ok,
    outlier_detection: outlier,
    transport_socket_matches: [plaintext],
  });
  const expected = [
    'outlier_detection.enforcing_consecutive_5xx uint32.lte',
    'transport_socket_matches[0].transport_socket.name string.min_len',
  ];
  const fresh = (c: Cluster): string[] =>
    rulesOf(new Validator(rules, ENVOY_RULES).validate(TypeName.Cluster, c)).sort();
  assert.deepEqual(fresh(cluster('a')), expected);
  // One check (one shared set) and the process validator, as the snapshot build uses them.
  const check = new Set<object>();
  for (const name of ['a', 'b', 'c'])
    assert.deepEqual(rulesOf(validateResource('clusters', cluster(name), check)).sort(), expected, name);
  assert.deepEqual(rulesOf(validateResource('clusters', cluster('d'))).sort(), expected);
});

test('a frozen part of any type is remembered once clean; a broken one is reported in every resource that holds it, in one check and in a second build', () => {
  // No shared or frozen-shared types given: a frozen endpoint (src/compile/endpoints.ts freezes
  // every one, shared by the ClusterLoadAssignments of a service) is remembered because it is frozen.
  const LB = 'envoy.config.endpoint.v3.LbEndpoint';
  const walked = new Map<object, number>();
  const counting: MessageHook = (m) => void walked.set(m, (walked.get(m) ?? 0) + 1);
  const v = new Validator(rules, { ...ENVOY_RULES, [LB]: counting });
  const endpoint = (address: string, port: number) =>
    deepFreeze({ endpoint: { address: { socket_address: { address, port_value: port } } } });
  const good = endpoint('10.0.0.1', 8080);
  // port_value is uint32 lte 65535.
  const broken = endpoint('10.0.0.2', 70000);
  type Cla = { cluster_name: string; endpoints: { locality: { zone: string }; lb_endpoints: object[] }[] };
  const cla = (name: string, lbEndpoints: object[]): Cla => ({
    cluster_name: name,
    endpoints: [{ locality: { zone: 'a' }, lb_endpoints: lbEndpoints }],
  });
  const CLA = TypeName.ClusterLoadAssignment;
  const alone = (m: Cla): Violation[] => new Validator(rules, ENVOY_RULES).validate(CLA, m);
  const firstBuild = ['a', 'b', 'c'].map((name) => cla(name, [good, broken]));
  const expected = ['endpoints[0].lb_endpoints[1].endpoint.address.socket_address.port_value uint32.lte'];
  const check = new Set<object>();
  for (const m of firstBuild) {
    assert.deepEqual(rulesOf(v.validate(CLA, m, check)), expected, m.cluster_name);
    assert.deepEqual(v.validate(CLA, m, check), alone(m), `${m.cluster_name} alone`);
  }
  // A second build: new resources holding the same frozen endpoints, the broken one first now.
  const secondBuild = ['a', 'b'].map((name) => cla(name, [broken, good]));
  for (const m of secondBuild) {
    assert.deepEqual(rulesOf(v.validate(CLA, m, new Set())), [
      'endpoints[0].lb_endpoints[0].endpoint.address.socket_address.port_value uint32.lte',
    ]);
    assert.deepEqual(v.validate(CLA, m), alone(m), `${m.cluster_name} alone`);
  }
  assert.equal(walked.get(good), 1, 'the clean frozen endpoint is walked once, in both builds');
  assert.equal(walked.get(broken), 5, 'the broken frozen endpoint is walked (and reported) in every resource');
  // The process validator, as the snapshot build uses it: each build's resources report it.
  for (const m of [...firstBuild, ...secondBuild].map((c) => ({ ...c })))
    assert.deepEqual(rulesOf(validateResource('endpoints', m)), rulesOf(alone(m)));
});

test('a validator for one check (memory: check) reports what a process validator reports, first and again', () => {
  const forProcess = new Validator(rules, ENVOY_RULES, new Set([VH]));
  const once = new Validator(rules, ENVOY_RULES, new Set([VH]), new Set(), { memory: 'check' });
  const broken: RouteConfiguration = config('80', new Map([[3, host('svc-3', [])]]), [host('x', ['svc-7.ns-3'])]);
  const clean: RouteConfiguration = config('80', new Map());
  const badCluster = { name: '', connect_timeout: { seconds: 0 } } as Cluster;
  const cases: [string, object][] = [
    [RC, clean],
    [RC, broken],
    [TypeName.Cluster, badCluster],
    [RC, clean],
  ];
  for (let round = 0; round < 2; round++) {
    for (const [type, message] of cases) {
      const expected = forProcess.validate(type, message);
      assert.deepEqual(once.validate(type, message), expected, `${type}, round ${round}`);
    }
  }
  assert.ok(rulesOf(once.validate(RC, broken)).length > 0, 'the broken config breaks rules');
  assert.ok(once.validate(TypeName.Cluster, badCluster).length > 0, 'the broken cluster breaks rules');
});

/** A clean config of 100 hosts checked as "forget" (so kept as its basis), and the same less its first host plus a clash. */
function checkedBasis(): { first: WeakRef<VirtualHost>; clash: VirtualHost[] } {
  const hosts = Array.from({ length: 100 }, (_, i) => host(`forget-${i}.example:80`, [`forget-${i}.example`]));
  assert.deepEqual(domainClashes('forget', hosts), []);
  return {
    first: new WeakRef(hosts[0] as VirtualHost),
    clash: [...hosts.slice(1), host('again', ['FORGET-7.example'])],
  };
}

test('forgetDomainBases lets go of the clean configs kept as bases (their virtual hosts), and the check stays the same', async () => {
  const { first, clash } = checkedBasis();
  const expected = domainClashes('forget', clash);
  assert.equal(expected.length, 1);
  forgetDomainBases();
  assert.deepEqual(domainClashes('forget', clash), expected, 'the same clashes without a basis');
  await nextTurn(); // a WeakRef's target stays alive until the end of the job that made or read it
  queryObjects(Object, { format: 'count' }); // runs a full collection
  assert.equal(first.deref(), undefined, 'no basis holds the first config');
});

test('a one-check validator walks each resource afresh with one reused walk: every resource reports as a fresh validator alone', () => {
  const once = new Validator(rules, ENVOY_RULES, new Set([VH]), new Set(), { memory: 'check' });
  const fresh = (type: string, m: object): Violation[] =>
    new Validator(rules, ENVOY_RULES, new Set([VH])).validate(type, m);
  const badCluster = (name: string): Cluster => ({ name, connect_timeout: { seconds: 0 } }) as Cluster;
  const goodCluster = (name: string): Cluster => ({ name, connect_timeout: { seconds: 1 } }) as Cluster;
  const badHost = host('bad', []);
  const cases: [string, object][] = [
    [TypeName.Cluster, goodCluster('a')],
    [TypeName.Cluster, badCluster('')],
    [TypeName.Cluster, goodCluster('b')],
    [RC, config('80', new Map())],
    [RC, config('81', new Map([[5, badHost]]))],
    [RC, config('82', new Map([[7, ownHost(7)]]), [host('x', ['svc-7'])])],
    [TypeName.Cluster, badCluster('c')],
    [RC, config('80', new Map([[3, badHost]]))],
  ];
  const seen: Violation[][] = [];
  for (const [type, message] of cases) {
    const got = once.validate(type, message);
    assert.deepEqual(got, fresh(type, message), type);
    seen.push(got);
  }
  // What a walk handed out stays as it was: the next resources are walked with another walk.
  assert.deepEqual(
    seen.map((vs) => rulesOf(vs)),
    cases.map(([type, message]) => rulesOf(fresh(type, message))),
  );
  // The same resource again (no memory of resources in a one-check validator): the same answer.
  for (const [type, message] of cases)
    assert.deepEqual(once.validate(type, message), fresh(type, message), `${type} again`);
  assert.ok(seen.filter((vs) => vs.length > 0).length >= 4, 'the broken resources break rules');
});

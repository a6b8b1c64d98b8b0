/**
 * DeltaBuilder's "did this resource change" test: structurally equal messages are the same
 * without being encoded, and anything else is decided by the encodings.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DeltaBuilder, sameResource, VirtualHostVerdicts } from '../../src/compile/incremental/delta.js';
import { emptyTable } from '../../src/compile/types.js';
import type { Cluster, RouteConfiguration, VirtualHost } from '../../src/xds/proto.js';

const cluster = (over: Partial<Cluster> = {}): Cluster => ({
  name: 'outbound|80||a.ns.svc.cluster.local',
  type: 3,
  connect_timeout: { seconds: 10 },
  metadata: { filter_metadata: { istio: { fields: { services: { listValue: { values: [{ stringValue: 'a' }] } } } } } },
  common_lb_config: { healthy_panic_threshold: { value: 0 } },
  ...over,
});

test('sameResource: separately built equal messages are the same; a changed value is not', () => {
  assert.ok(sameResource('clusters', cluster(), cluster()));
  assert.ok(!sameResource('clusters', cluster(), cluster({ connect_timeout: { seconds: 11 } })));
  assert.ok(
    !sameResource(
      'clusters',
      cluster(),
      cluster({
        metadata: {
          filter_metadata: { istio: { fields: { services: { listValue: { values: [{ stringValue: 'b' }] } } } } },
        },
      }),
    ),
  );
});

test('sameResource: what structure cannot tell is decided by the bytes (-0, map key order)', () => {
  // 0 and -0 are equal to ===, not as encoded doubles.
  assert.ok(
    !sameResource('clusters', cluster(), cluster({ common_lb_config: { healthy_panic_threshold: { value: -0 } } })),
  );
  // Map entries are encoded in insertion order.
  const two = (first: string, second: string): Cluster =>
    cluster({ metadata: { filter_metadata: { [first]: { fields: {} }, [second]: { fields: {} } } } });
  assert.ok(sameResource('clusters', two('a', 'b'), two('a', 'b')));
  assert.ok(!sameResource('clusters', two('a', 'b'), two('b', 'a')));
});

const vhost = (name: string, timeout = 15): VirtualHost => ({
  name,
  domains: [name, `${name}:9080`],
  routes: [{ match: { prefix: '/' }, route: { cluster: `outbound|9080||${name}`, timeout: { seconds: timeout } } }],
});
const routeConfig = (hosts: readonly VirtualHost[], over: Partial<RouteConfiguration> = {}): RouteConfiguration => ({
  name: '9080',
  virtual_hosts: [...hosts],
  validate_clusters: { value: false },
  ...over,
});

test('sameResource on route configs: decided host by host, with what the bytes say of each host', () => {
  const hosts = ['a', 'b', 'c'].map((n) => vhost(n));
  // Separately built, equal.
  assert.ok(sameResource('routes', routeConfig(hosts), routeConfig(['a', 'b', 'c'].map((n) => vhost(n)))));
  // One host changed, in the middle: not the same, whichever side holds it.
  const changed = [hosts[0] as VirtualHost, vhost('b', 16), hosts[2] as VirtualHost];
  assert.ok(!sameResource('routes', routeConfig(hosts), routeConfig(changed)));
  assert.ok(!sameResource('routes', routeConfig(changed), routeConfig(hosts)));
  // A host more, a host fewer, the hosts' order.
  assert.ok(!sameResource('routes', routeConfig(hosts), routeConfig([...hosts, vhost('d')])));
  assert.ok(!sameResource('routes', routeConfig(hosts), routeConfig(hosts.slice(1))));
  assert.ok(!sameResource('routes', routeConfig(hosts), routeConfig([...hosts].reverse())));
  // A field besides the hosts.
  assert.ok(!sameResource('routes', routeConfig(hosts), routeConfig(hosts, { name: '9081' })));
  assert.ok(!sameResource('routes', routeConfig(hosts), routeConfig(hosts, { validate_clusters: { value: true } })));
  // What structure cannot tell, the encoding does: a default value written or left out, in a host
  // and beside the hosts; no hosts and an empty list.
  const withDefault: VirtualHost = { ...(hosts[1] as VirtualHost), require_tls: 0 };
  assert.ok(
    sameResource(
      'routes',
      routeConfig(hosts),
      routeConfig([hosts[0] as VirtualHost, withDefault, hosts[2] as VirtualHost]),
    ),
  );
  assert.ok(sameResource('routes', routeConfig(hosts), routeConfig(hosts, { ignore_port_in_host_matching: false })));
  assert.ok(sameResource('routes', { name: 'x' }, { name: 'x', virtual_hosts: [] }));
  assert.ok(!sameResource('routes', { name: 'x' }, { name: 'x', virtual_hosts: [vhost('a')] }));
});

test('sameResource on route configs: a verdict on a pair of hosts holds for every config that shares them', () => {
  // Every namespace's config holds the same host objects (the compiler shares them): one set of
  // verdicts per diff, one comparison per pair, the same answer everywhere.
  const before = ['a', 'b', 'c'].map((n) => vhost(n));
  const after = [vhost('a'), vhost('b', 16), vhost('c')];
  const verdicts = new VirtualHostVerdicts();
  for (const ns of ['ns-1', 'ns-2', 'ns-3']) {
    assert.ok(!sameResource('routes', routeConfig(before, { name: ns }), routeConfig(after, { name: ns }), verdicts));
    assert.ok(
      sameResource(
        'routes',
        routeConfig(before.slice(0, 1), { name: ns }),
        routeConfig(after.slice(0, 1), { name: ns }),
        verdicts,
      ),
    );
  }
  // A host compared against another one than before is compared again, not answered from the pair before.
  assert.ok(!verdicts.same(before[1] as VirtualHost, after[0] as VirtualHost));
  assert.ok(!verdicts.same(before[0] as VirtualHost, after[1] as VirtualHost));
  assert.ok(verdicts.same(before[1] as VirtualHost, vhost('b')));
  assert.ok(!verdicts.same(before[1] as VirtualHost, after[1] as VirtualHost));
});

test('DeltaBuilder: a changed route config keeps the host objects that encode the same, also past an added host', () => {
  const before = ['a', 'b', 'd', 'e'].map((n) => vhost(n));
  const table = emptyTable();
  table.routes.set('9080', routeConfig(before));
  const builder = new DeltaBuilder(new Map([['routes/ns', table]]));
  // Rebuilt from scratch: b changed, c added before d.
  const next = routeConfig([vhost('a'), vhost('b', 16), vhost('c'), vhost('d'), vhost('e')]);
  builder.upsert('routes/ns', 'routes', '9080', next);
  const stored = table.routes.get('9080') as RouteConfiguration;
  const hosts = stored.virtual_hosts ?? [];
  assert.deepEqual(
    hosts.map((h) => h.name),
    ['a', 'b', 'c', 'd', 'e'],
  );
  assert.equal(hosts[0], before[0]);
  assert.equal(hosts[1], next.virtual_hosts?.[1], 'the changed host is the new one');
  assert.equal(hosts[2], next.virtual_hosts?.[2], 'the added host is the new one');
  assert.equal(hosts[3], before[2]);
  assert.equal(hosts[4], before[3]);
  assert.equal(builder.delta['routes/ns']?.routes?.upserts.get('9080'), stored);
  // The same bytes as the config rebuilt.
  assert.ok(sameResource('routes', stored, next));
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Diagnostics } from '../../src/model/diagnostics.js';
import { DEFAULT_MESH_CONFIG } from '../../src/model/mesh-config.js';
import { indexVirtualServices } from '../../src/compile/virtual-services.js';
import { bookinfoServices, model, service, vs } from './routes-fixture.js';

const REVIEWS = 'reviews.default.svc.cluster.local';
const to = (host: string) => [{ destination: { host } }];

function index(vss: ReturnType<typeof vs>[], services = bookinfoServices()) {
  const diags = new Diagnostics();
  return { idx: indexVirtualServices(model(services, vss), DEFAULT_MESH_CONFIG, diags), diags };
}

test('hosts resolve relative to the VirtualService namespace; destinations are fully qualified', () => {
  const { idx } = index([vs('r', 'default', ['reviews.default'], [{ route: to('reviews') }])]);
  const routes = idx.httpRoutes(REVIEWS);
  assert.equal(routes?.length, 1);
  assert.equal(routes?.[0]?.route.route?.[0]?.destination.host, REVIEWS);
  assert.equal(idx.httpRoutes('ratings.default.svc.cluster.local'), undefined);
});

test('only mesh-bound VirtualServices apply to sidecars', () => {
  const { idx } = index([
    vs('gw', 'default', ['reviews'], [{ route: to('reviews') }], { gateways: ['bookinfo-gateway'] }),
    vs('both', 'default', ['ratings'], [{ route: to('ratings') }], { gateways: ['bookinfo-gateway', 'mesh'] }),
  ]);
  assert.equal(idx.httpRoutes(REVIEWS), undefined);
  assert.equal(idx.httpRoutes('ratings.default.svc.cluster.local')?.[0]?.source.meta.name, 'both');
});

test('several VirtualServices for one host without creationTimestamps: the first by name wins, the others are reported', () => {
  const { idx, diags } = index([
    vs('zeta', 'default', ['reviews'], [{ name: 'z', route: to('reviews') }]),
    vs('alpha', 'default', ['reviews'], [{ name: 'a', route: to('reviews') }]),
  ]);
  assert.deepEqual(
    idx.httpRoutes(REVIEWS)?.map((r) => r.route.name),
    ['a'],
  );
  assert.deepEqual(
    diags.all.map((d) => [d.severity, d.code, d.name]),
    [['warning', 'conflicting-virtual-service', 'zeta']],
  );
  assert.match(diags.all[0]?.message ?? '', /default\/alpha, default\/zeta/);
});

test('wildcard hosts: exact beats wildcard, the most specific wildcard wins', () => {
  const services = [...bookinfoServices(), service('web', 'shop', [[80, 'HTTP']], '10.0.0.9')];
  const { idx, diags } = index(
    [
      vs('all', 'default', ['*.svc.cluster.local'], [{ name: 'all', route: to('reviews') }]),
      vs('ns', 'default', ['*.default.svc.cluster.local'], [{ name: 'ns', route: to('reviews') }]),
      vs('exact', 'default', ['ratings'], [{ name: 'exact', route: to('ratings') }]),
    ],
    services,
  );
  assert.equal(idx.httpRoutes(REVIEWS)?.[0]?.route.name, 'ns');
  assert.equal(idx.httpRoutes('ratings.default.svc.cluster.local')?.[0]?.route.name, 'exact');
  assert.equal(idx.httpRoutes('web.shop.svc.cluster.local')?.[0]?.route.name, 'all');
  assert.deepEqual(diags.all, []);
});

test('delegate routes are merged under the parent match, with destinations resolved in the delegate namespace', () => {
  const services = [...bookinfoServices(), service('reviews', 'team', [[9080, 'HTTP']], '10.0.0.7')];
  const root = vs(
    'root',
    'default',
    ['reviews'],
    [
      {
        name: 'api',
        match: [{ uri: { prefix: '/api' } }],
        timeoutMs: 3000,
        delegate: { name: 'child', namespace: 'team' },
      },
      { route: to('reviews') },
    ],
  );
  const child = vs(
    'child',
    'team',
    [],
    [
      { name: 'v1', match: [{ uri: { prefix: '/api/v1' } }], route: to('reviews') },
      { name: 'bad', match: [{ uri: { prefix: '/other' } }], route: to('reviews') },
    ],
  );
  const { idx, diags } = index([root, child], services);
  const routes = idx.httpRoutes(REVIEWS) ?? [];
  assert.deepEqual(
    routes.map((r) => r.route.name),
    ['api-v1', undefined],
  );
  const merged = routes[0]?.route;
  assert.deepEqual(merged?.match?.[0]?.uri, { prefix: '/api/v1' });
  assert.equal(merged?.timeoutMs, 3000, 'inherited from the parent route');
  assert.equal(merged?.route?.[0]?.destination.host, 'reviews.team.svc.cluster.local');
  assert.equal(routes[0]?.source.meta.name, 'root');
  assert.deepEqual(
    diags.all.map((d) => [d.code, d.namespace, d.name, d.field]),
    [['conflicting-match', 'team', 'child', 'spec.http[1].match']],
  );
});

test('a missing delegate is reported and its route skipped', () => {
  const { idx, diags } = index([
    vs('root', 'default', ['reviews'], [{ delegate: { name: 'ghost' } }, { name: 'rest', route: to('reviews') }]),
  ]);
  assert.deepEqual(
    idx.httpRoutes(REVIEWS)?.map((r) => r.route.name),
    ['rest'],
  );
  assert.equal(diags.all[0]?.code, 'unknown-delegate');
  assert.equal(diags.all[0]?.field, 'spec.http[0].delegate');
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildProxylessNamespaceRoutes, buildProxylessRoutes } from '../../src/compile/routes.js';
import { decodeMessage, encodeMessage, type RouteConfiguration } from '../../src/xds/proto.js';
import { TypeName } from '../../src/xds/type-urls.js';
import { bookinfo, bookinfoServices, context, dr, model, service, vs } from './routes-fixture.js';

const REVIEWS = 'reviews.default.svc.cluster.local';

test('one route config per service port, named like the api_listener, with FQDN domains only', () => {
  const ctx = bookinfo('virtual-service-reviews-50-v3.yaml');
  const rcs = buildProxylessRoutes(ctx);
  assert.deepEqual(
    [...rcs.keys()],
    ['details', 'productpage', 'ratings', 'reviews'].map((n) => `${n}.default.svc.cluster.local:9080`),
  );
  const rc = rcs.get(`${REVIEWS}:9080`);
  assert.equal(rc?.virtual_hosts?.length, 1);
  const vh = rc?.virtual_hosts?.[0];
  assert.equal(vh?.name, `${REVIEWS}:9080`);
  // Targets are `xds:///<fqdn>:<port>`: no namespace-relative short names, so one config for every namespace.
  assert.deepEqual(vh?.domains, [REVIEWS, `${REVIEWS}:9080`]);
  assert.equal(rc?.validate_clusters, undefined);
  assert.equal(buildProxylessNamespaceRoutes(ctx, 'default').size, 0, 'nothing depends on the client namespace');
  const route = vh?.routes?.[0];
  assert.deepEqual(
    route?.route?.weighted_clusters?.clusters?.map((c) => c.name),
    [`outbound|9080|v1|${REVIEWS}`, `outbound|9080|v3|${REVIEWS}`],
  );
});

test('timeouts become max_stream_duration; redirect and direct responses are left out with an info', () => {
  const ctx = context(
    model(
      bookinfoServices(),
      [
        vs(
          'reviews',
          'default',
          ['reviews'],
          [
            { name: 'redir', match: [{ uri: { prefix: '/old' } }], redirect: { uri: '/new' } },
            { name: 'direct', match: [{ uri: { prefix: '/teapot' } }], directResponse: { status: 418 } },
            {
              name: 'main',
              timeoutMs: 2000,
              fault: { delay: { fixedDelayMs: 100, percentage: { value: 50 } } },
              corsPolicy: { allowMethods: ['GET'] },
              route: [{ destination: { host: 'reviews', subset: 'v1' } }],
            },
          ],
        ),
      ],
      [dr('reviews', 'default', 'reviews', ['v1'])],
    ),
  );
  const vh = buildProxylessRoutes(ctx).get(`${REVIEWS}:9080`)?.virtual_hosts?.[0];
  assert.deepEqual(
    vh?.routes?.map((r) => r.name),
    ['main'],
  );
  const main = vh?.routes?.[0];
  assert.deepEqual(main?.route?.max_stream_duration, { max_stream_duration: { seconds: 2 } });
  assert.equal(main?.route?.max_grpc_timeout, undefined);
  assert.deepEqual(
    Object.keys(main?.typed_per_filter_config ?? {}),
    ['envoy.filters.http.fault'],
    'no CORS for grpc-js-xds',
  );
  const infos = ctx.diags.sorted().filter((d) => d.severity === 'info');
  assert.deepEqual(
    infos.map((d) => [d.code, d.field]),
    [
      ['proxyless-unsupported-route', 'spec.http[0].redirect'],
      ['proxyless-unsupported-route', 'spec.http[1].directResponse'],
    ],
  );
  buildProxylessRoutes(ctx);
  assert.equal(ctx.diags.all.length, 2, 'reported once');
  const rc = buildProxylessRoutes(ctx).get(`${REVIEWS}:9080`) as RouteConfiguration;
  const bytes = encodeMessage(TypeName.RouteConfiguration, rc);
  assert.deepEqual(
    encodeMessage(TypeName.RouteConfiguration, decodeMessage(TypeName.RouteConfiguration, bytes)),
    bytes,
  );
});

test('headless, ExternalName and PASSTHROUGH services get no proxyless route config; destinations to them are left out with an info', () => {
  const services = [
    ...bookinfoServices(),
    service('hl', 'default', [[9080, 'HTTP']]),
    service('ext', 'default', [[9080, 'HTTP']], undefined, { headless: false, externalName: 'api.example.com' }),
    service('pt', 'default', [[9080, 'HTTP']], '10.96.0.40'),
  ];
  const ctx = context(
    model(
      services,
      [
        vs(
          'reviews',
          'default',
          ['reviews'],
          [
            { name: 'to-hl', match: [{ uri: { prefix: '/hl' } }], route: [{ destination: { host: 'hl' } }] },
            {
              name: 'split',
              route: [
                { destination: { host: 'pt' }, weight: 50 },
                { destination: { host: 'ratings' }, weight: 50 },
              ],
            },
          ],
        ),
      ],
      [dr('pt', 'default', 'pt', [], { trafficPolicy: { loadBalancer: { simple: 'PASSTHROUGH' } } })],
    ),
  );
  const rcs = buildProxylessRoutes(ctx);
  assert.deepEqual(
    [...rcs.keys()],
    ['details', 'productpage', 'ratings', 'reviews'].map((n) => `${n}.default.svc.cluster.local:9080`),
  );
  const routes = rcs.get(`${REVIEWS}:9080`)?.virtual_hosts?.[0]?.routes;
  assert.deepEqual(
    routes?.map((r) => [r.name, r.route?.cluster]),
    [['split', 'outbound|9080||ratings.default.svc.cluster.local']],
  );
  assert.deepEqual(
    ctx.diags.sorted().map((d) => [d.severity, d.code, d.field]),
    [
      ['info', 'proxyless-unsupported-destination', 'spec.http[0].route'],
      ['info', 'proxyless-unsupported-destination', 'spec.http[1].route'],
    ],
  );
});

test('only route configs whose routes match on sourceNamespace are built per client namespace', () => {
  const ctx = context(
    model(
      bookinfoServices(),
      [
        vs(
          'reviews',
          'default',
          ['reviews'],
          [
            {
              name: 'team',
              match: [{ sourceNamespace: 'team' }],
              route: [{ destination: { host: 'reviews', subset: 'v2' } }],
            },
          ],
        ),
      ],
      [dr('reviews', 'default', 'reviews', ['v1', 'v2'])],
    ),
  );
  assert.ok(!buildProxylessRoutes(ctx).has(`${REVIEWS}:9080`));
  const team = buildProxylessNamespaceRoutes(ctx, 'team');
  const other = buildProxylessNamespaceRoutes(ctx, 'default');
  assert.deepEqual([...team.keys()], [`${REVIEWS}:9080`]);
  assert.deepEqual(
    team.get(`${REVIEWS}:9080`)?.virtual_hosts?.[0]?.routes?.map((r) => r.route?.cluster),
    [`outbound|9080|v2|${REVIEWS}`],
  );
  assert.deepEqual(
    other.get(`${REVIEWS}:9080`)?.virtual_hosts?.[0]?.routes?.map((r) => r.name),
    ['default'],
  );
  assert.deepEqual(team.get(`${REVIEWS}:9080`)?.virtual_hosts?.[0]?.domains, [REVIEWS, `${REVIEWS}:9080`]);
});

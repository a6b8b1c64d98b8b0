import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildOutboundRoutes } from '../../src/compile/routes.js';
import {
  decodeMessage,
  encodeMessage,
  envoy,
  type Route,
  type RouteConfiguration,
  type VirtualHost,
} from '../../src/xds/proto.js';
import { TypeName } from '../../src/xds/type-urls.js';
import { bookinfo, bookinfoServices, context, dr, model, service, vs } from './routes-fixture.js';

const REVIEWS = 'reviews.default.svc.cluster.local';
const RATINGS = 'ratings.default.svc.cluster.local';

function vhost(rc: RouteConfiguration | undefined, name: string): VirtualHost {
  const v = rc?.virtual_hosts?.find((h) => h.name === name);
  assert.ok(v, `virtual host ${name}`);
  return v;
}

const firstRoute = (v: VirtualHost): Route => v.routes?.[0] as Route;

function decodeAny<T>(typeName: string, any: { value?: Uint8Array | null } | undefined): T {
  return decodeMessage(typeName, any?.value ?? new Uint8Array()) as T;
}

test('reviews 50/50 splits between the v1 and v3 subset clusters', () => {
  const ctx = bookinfo('virtual-service-reviews-50-v3.yaml');
  const rc = buildOutboundRoutes(ctx, 'default').get('9080');
  const route = firstRoute(vhost(rc, `${REVIEWS}:9080`));
  assert.deepEqual(
    route.route?.weighted_clusters?.clusters?.map((c) => [c.name, c.weight?.value]),
    [
      [`outbound|9080|v1|${REVIEWS}`, 50],
      [`outbound|9080|v3|${REVIEWS}`, 50],
    ],
  );
  assert.equal(route.route?.cluster, undefined);
  assert.equal(route.decorator?.operation, 'reviews:9080/*');
  const meta = route.metadata?.filter_metadata?.istio?.fields?.config?.stringValue;
  assert.equal(meta, '/apis/networking.istio.io/v1/namespaces/default/virtual-service/reviews');
  assert.deepEqual(ctx.diags.all, []);
});

test('services without a VirtualService get the default route with the default retry policy', () => {
  const ctx = bookinfo('virtual-service-reviews-50-v3.yaml');
  const rc = buildOutboundRoutes(ctx, 'default').get('9080');
  const route = firstRoute(vhost(rc, `details.default.svc.cluster.local:9080`));
  assert.equal(route.name, 'default');
  assert.equal(route.match?.prefix, '/');
  assert.equal(route.route?.cluster, 'outbound|9080||details.default.svc.cluster.local');
  assert.deepEqual(route.route?.timeout, { seconds: 0 });
  assert.deepEqual(route.route?.max_grpc_timeout, { seconds: 0 });
  const retry = route.route?.retry_policy;
  assert.equal(retry?.retry_on, 'connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes');
  assert.equal(retry?.num_retries?.value, 2);
  assert.equal(retry?.host_selection_retry_max_attempts, 5);
  assert.deepEqual(
    retry?.retry_host_predicate?.map((p) => p.name),
    ['envoy.retry_host_predicates.previous_hosts'],
  );
  assert.equal(route.decorator?.operation, 'details.default.svc.cluster.local:9080/*');
  assert.equal(route.metadata, undefined);
});

test('virtual hosts are sorted, followed by allow_any; config flags follow istiod', () => {
  const ctx = bookinfo();
  const rc = buildOutboundRoutes(ctx, 'default').get('9080');
  assert.deepEqual(
    rc?.virtual_hosts?.map((v) => v.name),
    ['details', 'productpage', 'ratings', 'reviews']
      .map((n) => `${n}.default.svc.cluster.local:9080`)
      .concat('allow_any'),
  );
  const last = rc?.virtual_hosts?.at(-1);
  assert.deepEqual(last?.domains, ['*']);
  assert.equal(firstRoute(last as VirtualHost).route?.cluster, 'PassthroughCluster');
  assert.deepEqual(rc?.validate_clusters, { value: false });
  assert.equal(rc?.ignore_port_in_host_matching, true);
});

test('REGISTRY_ONLY ends with block_all answering 502', () => {
  const ctx = context(model(bookinfoServices()), { outboundTrafficPolicy: 'REGISTRY_ONLY' });
  const last = buildOutboundRoutes(ctx, 'default').get('9080')?.virtual_hosts?.at(-1);
  assert.equal(last?.name, 'block_all');
  assert.equal(firstRoute(last as VirtualHost).direct_response?.status, 502);
});

test('domains depend on the client namespace', () => {
  const ctx = bookinfo();
  const same = vhost(buildOutboundRoutes(ctx, 'default').get('9080'), `${REVIEWS}:9080`).domains;
  assert.deepEqual(same, [REVIEWS, 'reviews', 'reviews.default.svc', 'reviews.default', '10.96.0.13']);
  const other = vhost(buildOutboundRoutes(ctx, 'other').get('9080'), `${REVIEWS}:9080`).domains;
  assert.deepEqual(other, [REVIEWS, 'reviews.default', 'reviews.default.svc', '10.96.0.13']);
});

test("virtual hosts of other namespaces' services are the same objects in every namespace's config", () => {
  const services = [
    ...bookinfoServices(),
    service('web', 'shop', [[9080, 'HTTP']], '10.96.1.1'),
    service('pay', 'payments', [[9080, 'HTTP']], '10.96.2.1'),
  ];
  const ctx = context(
    model(services, [
      vs(
        'reviews',
        'default',
        ['reviews'],
        [{ match: [{ sourceNamespace: 'shop' }], route: [{ destination: { host: 'reviews' } }] }],
      ),
    ]),
  );
  const rc = (ns: string) => buildOutboundRoutes(ctx, ns).get('9080') as RouteConfiguration;
  const [def, shop, pay, none] = [rc('default'), rc('shop'), rc('payments'), rc('nowhere')];
  const RATINGS_VH = `${RATINGS}:9080`;
  // Shared: built once, encoded once (src/xds/route-config-encoder.ts).
  assert.equal(vhost(shop, RATINGS_VH), vhost(pay, RATINGS_VH));
  assert.equal(vhost(shop, RATINGS_VH), vhost(none, RATINGS_VH));
  assert.equal(vhost(shop, 'allow_any'), vhost(def, 'allow_any'));
  assert.equal(vhost(def, 'web.shop.svc.cluster.local:9080'), vhost(pay, 'web.shop.svc.cluster.local:9080'));
  // Own namespace: its own object, with the short name.
  assert.notEqual(vhost(def, RATINGS_VH), vhost(shop, RATINGS_VH));
  assert.ok(vhost(def, RATINGS_VH).domains?.includes('ratings'));
  assert.ok(!vhost(shop, RATINGS_VH).domains?.includes('ratings'));
  assert.ok(vhost(shop, 'web.shop.svc.cluster.local:9080').domains?.includes('web'));
  assert.notEqual(vhost(shop, 'web.shop.svc.cluster.local:9080'), vhost(pay, 'web.shop.svc.cluster.local:9080'));
  // Routes that match on sourceNamespace: per namespace.
  assert.deepEqual(
    vhost(shop, `${REVIEWS}:9080`).routes?.map((r) => r.name ?? ''),
    [''],
  );
  assert.deepEqual(
    vhost(pay, `${REVIEWS}:9080`).routes?.map((r) => r.name),
    ['default'],
  );
  // Same order and content as a per-namespace build would give.
  for (const r of [def, shop, pay, none]) {
    const names = r.virtual_hosts?.map((v) => v.name) ?? [];
    assert.deepEqual(names.slice(0, -1), [...names.slice(0, -1)].sort());
    assert.equal(names.at(-1), 'allow_any');
  }
  assert.deepEqual(vhost(pay, `${REVIEWS}:9080`).domains, [
    REVIEWS,
    'reviews.default',
    'reviews.default.svc',
    '10.96.0.13',
  ]);
});

test('a cluster IP used twice is claimed by the first virtual host in every namespace', () => {
  const services = [service('a', 'x', [[80, 'HTTP']], '10.0.0.9'), service('b', 'y', [[80, 'HTTP']], '10.0.0.9')];
  const ctx = context(model(services));
  for (const ns of ['x', 'y', 'z']) {
    const rc = buildOutboundRoutes(ctx, ns).get('80');
    assert.ok(vhost(rc, 'a.x.svc.cluster.local:80').domains?.includes('10.0.0.9'));
    assert.ok(!vhost(rc, 'b.y.svc.cluster.local:80').domains?.includes('10.0.0.9'), ns);
    assert.equal(vhost(rc, 'b.y.svc.cluster.local:80').domains?.includes('b'), ns === 'y');
  }
});

test('one route config per HTTP port; TCP ports get none', () => {
  const ctx = context(
    model([
      service(
        'web',
        'default',
        [
          [80, 'HTTP'],
          [8443, 'GRPC'],
        ],
        '10.0.0.1',
      ),
      service('db', 'default', [[3306, 'MySQL']], '10.0.0.2'),
    ]),
  );
  assert.deepEqual([...buildOutboundRoutes(ctx, 'default').keys()], ['80', '8443']);
});

test('jason header match routes to v2, everything else to v3', () => {
  const ctx = bookinfo('virtual-service-reviews-jason-v2-v3.yaml');
  const routes = vhost(buildOutboundRoutes(ctx, 'default').get('9080'), `${REVIEWS}:9080`).routes ?? [];
  assert.equal(routes.length, 2);
  assert.deepEqual(routes[0]?.match?.headers, [{ name: 'end-user', string_match: { exact: 'jason' } }]);
  assert.deepEqual(routes[0]?.match?.case_sensitive, { value: true });
  assert.equal(routes[0]?.route?.cluster, `outbound|9080|v2|${REVIEWS}`);
  assert.equal(routes[1]?.route?.cluster, `outbound|9080|v3|${REVIEWS}`);
  assert.deepEqual(routes[1]?.match, { prefix: '/' });
});

test('fault delay and abort go to typed_per_filter_config envoy.filters.http.fault', () => {
  for (const [file, check] of [
    [
      'virtual-service-ratings-test-delay.yaml',
      (f: envoy.extensions.filters.http.fault.v3.HTTPFault) => {
        assert.equal(Number(f.delay?.fixed_delay?.seconds), 7);
        assert.equal(f.delay?.percentage?.numerator, 1_000_000);
        assert.equal(f.delay?.percentage?.denominator, envoy.type.v3.FractionalPercent.DenominatorType.MILLION);
      },
    ],
    [
      'virtual-service-ratings-test-abort.yaml',
      (f: envoy.extensions.filters.http.fault.v3.HTTPFault) => {
        assert.equal(f.abort?.http_status, 500);
        assert.equal(f.abort?.percentage?.numerator, 1_000_000);
      },
    ],
  ] as const) {
    const ctx = bookinfo(file);
    const routes = vhost(buildOutboundRoutes(ctx, 'default').get('9080'), `${RATINGS}:9080`).routes ?? [];
    const any = routes[0]?.typed_per_filter_config?.['envoy.filters.http.fault'];
    assert.equal(any?.type_url, 'type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault');
    check(decodeAny(TypeName.Fault, any));
    assert.equal(routes[1]?.typed_per_filter_config, undefined, 'the catch-all has no fault');
  }
});

function single(
  http: Parameters<typeof vs>[3][number],
  services = bookinfoServices(),
  rules = [dr('reviews', 'default', 'reviews', ['v1', 'v2', 'v3'])],
) {
  const ctx = context(model(services, [vs('reviews', 'default', ['reviews'], [http])], rules));
  const routes = vhost(buildOutboundRoutes(ctx, 'default').get('9080'), `${REVIEWS}:9080`).routes ?? [];
  return { ctx, routes, route: routes[0] as Route };
}

test('uri matches: exact, prefix, regex, ignoreUriCase, method/authority/scheme, query and withoutHeaders', () => {
  const { route } = single({
    name: 'r',
    match: [
      {
        name: 'm',
        uri: { regex: '/api/v[0-9]+' },
        ignoreUriCase: true,
        method: { exact: 'GET' },
        authority: { prefix: 'shop' },
        scheme: { exact: 'https' },
        queryParams: { debug: {}, q: { exact: '1' } },
        withoutHeaders: { 'x-b': { exact: 'no' }, 'x-a': {} },
      },
    ],
    route: [{ destination: { host: 'reviews' } }],
  });
  assert.equal(route.name, 'r.m');
  assert.deepEqual(route.match?.safe_regex, { regex: '/api/v[0-9]+' });
  assert.deepEqual(route.match?.case_sensitive, { value: false });
  assert.deepEqual(route.match?.headers, [
    { name: 'x-a', present_match: true, invert_match: true },
    { name: 'x-b', string_match: { exact: 'no' }, invert_match: true, treat_missing_header_as_empty: true },
    { name: ':method', string_match: { exact: 'GET' } },
    { name: ':authority', string_match: { prefix: 'shop' } },
    { name: ':scheme', string_match: { exact: 'https' } },
  ]);
  assert.deepEqual(route.match?.query_parameters, [
    { name: 'debug', present_match: true },
    { name: 'q', string_match: { exact: '1' } },
  ]);
  assert.equal(route.decorator?.operation, `${REVIEWS}:9080/api/v[0-9]+`);
});

test('redirect and direct response', () => {
  const r = single({
    match: [{ uri: { exact: '/old' } }],
    redirect: { uri: '/new', authority: 'new.example.com', redirectCode: 302, port: 8080, scheme: 'https' },
  }).route;
  assert.deepEqual(r.redirect, {
    path_redirect: '/new',
    host_redirect: 'new.example.com',
    scheme_redirect: 'https',
    port_redirect: 8080,
    response_code: envoy.config.route.v3.RedirectAction.RedirectResponseCode.FOUND,
  });
  assert.equal(r.route, undefined);
  const d = single({ directResponse: { status: 418, body: { string: 'teapot' } } }).route;
  assert.deepEqual(d.direct_response, { status: 418, body: { inline_string: 'teapot' } });
  const bad = single({ match: [{ uri: { exact: '/x' } }], redirect: { uri: '/y', redirectCode: 399 } });
  assert.equal(bad.routes[0]?.name, 'default', 'an unsupported redirect code drops the route');
  assert.equal(bad.ctx.diags.all[0]?.code, 'unsupported-redirect-code');
});

test('rewrite, timeout, retries, mirror and header operations', () => {
  const { route, ctx } = single({
    match: [{ uri: { prefix: '/v1' } }],
    rewrite: { uri: '/v2', authority: 'reviews.internal' },
    timeoutMs: 1500,
    retries: { attempts: 3, perTryTimeoutMs: 500, retryOn: 'gateway-error,503,connect-failure' },
    mirrors: [
      { destination: { host: 'reviews.default.svc.cluster.local', subset: 'v2' }, percentage: { value: 12.5 } },
    ],
    headers: {
      request: { set: { 'x-b': '1', ':path': 'nope' }, add: { 'x-a': '2' }, remove: ['x-gone'] },
      response: { set: { 'x-r': '3' } },
    },
    route: [{ destination: { host: 'reviews', subset: 'v1' }, headers: { request: { set: { 'x-dest': 'v1' } } } }],
  });
  assert.deepEqual(ctx.diags.all, []);
  const a = route.route;
  assert.equal(a?.prefix_rewrite, '/v2');
  assert.equal(a?.host_rewrite_literal, 'reviews.internal');
  assert.deepEqual(a?.timeout, { seconds: 1, nanos: 500_000_000 });
  assert.deepEqual(a?.max_grpc_timeout, a?.timeout);
  assert.equal(a?.retry_policy?.num_retries?.value, 3);
  assert.equal(a?.retry_policy?.retry_on, 'gateway-error,connect-failure,retriable-status-codes');
  assert.deepEqual(a?.retry_policy?.retriable_status_codes, [503]);
  assert.deepEqual(a?.retry_policy?.per_try_timeout, { seconds: 0, nanos: 500_000_000 });
  assert.deepEqual(a?.request_mirror_policies, [
    {
      cluster: `outbound|9080|v2|${REVIEWS}`,
      runtime_fraction: {
        default_value: { numerator: 125_000, denominator: envoy.type.v3.FractionalPercent.DenominatorType.MILLION },
      },
      trace_sampled: { value: false },
    },
  ]);
  const { OVERWRITE_IF_EXISTS_OR_ADD: SET, APPEND_IF_EXISTS_OR_ADD: ADD } =
    envoy.config.core.v3.HeaderValueOption.HeaderAppendAction;
  assert.deepEqual(route.request_headers_to_add, [
    { header: { key: 'x-b', value: '1' }, append_action: SET },
    { header: { key: 'x-a', value: '2' }, append_action: ADD },
    { header: { key: 'x-dest', value: 'v1' }, append_action: SET },
  ]);
  assert.deepEqual(route.request_headers_to_remove, ['x-gone']);
  assert.deepEqual(route.response_headers_to_add, [{ header: { key: 'x-r', value: '3' }, append_action: SET }]);
  assert.equal(route.decorator?.operation, `${REVIEWS}:9080/v1*`);
});

test('attempts 0 disables retries; regex rewrite; per-destination headers on weighted clusters', () => {
  const { route } = single({
    retries: { attempts: 0 },
    rewrite: { uriRegexRewrite: { match: '^/a/(.*)', rewrite: '/\\1' } },
    route: [
      { destination: { host: 'reviews', subset: 'v1' }, weight: 90, headers: { response: { add: { 'x-v': '1' } } } },
      { destination: { host: 'reviews', subset: 'v2' }, weight: 10 },
      { destination: { host: 'reviews', subset: 'v3' }, weight: 0 },
    ],
  });
  assert.equal(route.route?.retry_policy, undefined);
  assert.deepEqual(route.route?.regex_rewrite, { pattern: { regex: '^/a/(.*)' }, substitution: '/\\1' });
  const clusters = route.route?.weighted_clusters?.clusters ?? [];
  assert.deepEqual(
    clusters.map((c) => c.name),
    [`outbound|9080|v1|${REVIEWS}`, `outbound|9080|v2|${REVIEWS}`],
  );
  assert.equal(clusters[0]?.response_headers_to_add?.[0]?.header?.key, 'x-v');
  assert.equal(route.decorator?.operation, 'reviews:9080/*');
});

test('CORS policy goes to envoy.filters.http.cors, keys sorted before fault', () => {
  const { route } = single({
    corsPolicy: {
      allowOrigins: [{ exact: 'https://a.example' }, { regex: '.*\\.b\\.example' }],
      allowMethods: ['GET', 'POST'],
      allowHeaders: ['x-h'],
      maxAgeMs: 86_400_000,
      allowCredentials: true,
    },
    fault: { abort: { httpStatus: 503 } },
    route: [{ destination: { host: 'reviews' } }],
  });
  assert.deepEqual(Object.keys(route.typed_per_filter_config ?? {}), [
    'envoy.filters.http.cors',
    'envoy.filters.http.fault',
  ]);
  const cors = decodeAny<envoy.extensions.filters.http.cors.v3.CorsPolicy>(
    TypeName.CorsPolicy,
    route.typed_per_filter_config?.['envoy.filters.http.cors'],
  );
  assert.equal(cors.allow_methods, 'GET,POST');
  assert.equal(cors.max_age, '86400');
  assert.equal(cors.allow_credentials?.value, true);
  assert.equal(cors.allow_origin_string_match?.[1]?.safe_regex?.regex, '.*\\.b\\.example');
  const fault = decodeAny<envoy.extensions.filters.http.fault.v3.HTTPFault>(
    TypeName.Fault,
    route.typed_per_filter_config?.['envoy.filters.http.fault'],
  );
  assert.equal(fault.abort?.http_status, 503);
  assert.equal(fault.abort?.percentage, null, 'no percentage: Envoy aborts every request');
});

test('consistent hash from the DestinationRule becomes the route hash policy, without the previous-hosts predicate', () => {
  const rule = dr('reviews', 'default', 'reviews', ['v1'], {
    trafficPolicy: { loadBalancer: { consistentHash: { httpCookie: { name: 'user', ttlMs: 0 } } } },
  });
  const { route } = single({ route: [{ destination: { host: 'reviews', subset: 'v1' } }] }, bookinfoServices(), [rule]);
  assert.deepEqual(route.route?.hash_policy, [{ cookie: { name: 'user', ttl: { seconds: 0 } } }]);
  assert.equal(route.route?.retry_policy?.retry_host_predicate, undefined);
  const subsetRule = dr('reviews', 'default', 'reviews', [], {
    subsets: [{ name: 'v1', trafficPolicy: { loadBalancer: { consistentHash: { httpHeaderName: 'x-user' } } } }],
    trafficPolicy: { loadBalancer: { consistentHash: { useSourceIp: true } } },
  });
  assert.deepEqual(
    single({ route: [{ destination: { host: 'reviews', subset: 'v1' } }] }, bookinfoServices(), [subsetRule]).route
      .route?.hash_policy,
    [{ header: { header_name: 'x-user' } }],
  );
  const ctx = context(
    model(
      bookinfoServices(),
      [],
      [
        dr('ratings', 'default', 'ratings', [], {
          trafficPolicy: { loadBalancer: { consistentHash: { httpQueryParameterName: 'u' } } },
        }),
      ],
    ),
  );
  const def = firstRoute(vhost(buildOutboundRoutes(ctx, 'default').get('9080'), `${RATINGS}:9080`));
  assert.deepEqual(def.route?.hash_policy, [{ query_parameter: { name: 'u' } }]);
});

test('weighted destinations sharing a consistent hash carry its hash policy once', () => {
  const rule = dr('reviews', 'default', 'reviews', ['v1', 'v2'], {
    trafficPolicy: { loadBalancer: { consistentHash: { httpHeaderName: 'x-user-id' } } },
  });
  const other = dr('ratings', 'default', 'ratings', [], {
    trafficPolicy: { loadBalancer: { consistentHash: { useSourceIp: true } } },
  });
  const { route } = single(
    {
      route: [
        { destination: { host: 'reviews', subset: 'v1' }, weight: 40 },
        { destination: { host: 'ratings' }, weight: 20 },
        { destination: { host: 'reviews', subset: 'v2' }, weight: 40 },
      ],
    },
    bookinfoServices(),
    [rule, other],
  );
  assert.deepEqual(route.route?.hash_policy, [
    { header: { header_name: 'x-user-id' } },
    { connection_properties: { source_ip: true } },
  ]);
});

test('unknown host, subset and port are reported on the destination and dropped', () => {
  const services = [
    ...bookinfoServices(),
    service(
      'multi',
      'default',
      [
        [9090, 'HTTP'],
        [9091, 'HTTP'],
      ],
      '10.96.0.20',
    ),
  ];
  const { ctx, routes } = single(
    {
      route: [
        { destination: { host: 'nope' }, weight: 20 },
        { destination: { host: 'reviews', subset: 'v9' }, weight: 20 },
        { destination: { host: 'multi' }, weight: 20 },
        { destination: { host: 'reviews', port: { number: 1234 } }, weight: 20 },
        { destination: { host: 'reviews', subset: 'v1' }, weight: 20 },
      ],
    },
    services,
  );
  const codes = ctx.diags.sorted().map((d) => [d.code, d.field, d.severity, d.kind, d.name, d.file]);
  assert.deepEqual(codes, [
    ['unknown-host', 'spec.http[0].route[0].destination.host', 'error', 'VirtualService', 'reviews', 'reviews.yaml'],
    [
      'unknown-subset',
      'spec.http[0].route[1].destination.subset',
      'error',
      'VirtualService',
      'reviews',
      'reviews.yaml',
    ],
    [
      'missing-port',
      'spec.http[0].route[2].destination.port.number',
      'error',
      'VirtualService',
      'reviews',
      'reviews.yaml',
    ],
    [
      'unknown-port',
      'spec.http[0].route[3].destination.port.number',
      'error',
      'VirtualService',
      'reviews',
      'reviews.yaml',
    ],
  ]);
  assert.equal(routes[0]?.route?.cluster, `outbound|9080|v1|${REVIEWS}`, 'the one valid destination is kept');
  // Built again for another namespace: no duplicate diagnostics.
  buildOutboundRoutes(ctx, 'other');
  assert.equal(ctx.diags.all.length, 4);
});

test("a destination naming no port of a service with several goes to the port the route is served on (istiod's GetDestinationCluster)", () => {
  const multi = service(
    'multi',
    'default',
    [
      [9080, 'HTTP'],
      [9090, 'HTTP'],
    ],
    '10.96.0.20',
  );
  const { ctx, route } = single({ route: [{ destination: { host: 'multi' } }] }, [...bookinfoServices(), multi]);
  assert.equal(route.route?.cluster, 'outbound|9080||multi.default.svc.cluster.local');
  assert.deepEqual(ctx.diags.all, []);
  // Its own VirtualService without a port: each port's virtual host routes to that port.
  const own = context(
    model([multi], [vs('multi', 'default', ['multi'], [{ route: [{ destination: { host: 'multi' } }] }])], []),
  );
  const configs = buildOutboundRoutes(own, 'default');
  for (const port of [9080, 9090])
    assert.equal(
      vhost(configs.get(String(port)), `multi.default.svc.cluster.local:${port}`).routes?.[0]?.route?.cluster,
      `outbound|${port}||multi.default.svc.cluster.local`,
    );
  assert.deepEqual(own.diags.all, []);
});

test('a route that loses every destination is dropped; the service falls back to the default route', () => {
  const { routes } = single({ route: [{ destination: { host: 'nope' } }] });
  assert.deepEqual(
    routes.map((r) => r.name),
    ['default'],
  );
});

test('match port limits a route to that port; sourceNamespace to that client namespace', () => {
  const services = [
    service(
      'reviews',
      'default',
      [
        [9080, 'HTTP'],
        [9090, 'HTTP'],
      ],
      '10.96.0.13',
    ),
  ];
  const ctx = context(
    model(services, [
      vs(
        'reviews',
        'default',
        ['reviews'],
        [
          {
            name: 'p',
            match: [{ port: 9090, uri: { prefix: '/p' } }],
            route: [{ destination: { host: 'reviews', port: { number: 9090 } } }],
          },
          {
            name: 'ns',
            match: [{ sourceNamespace: 'team', uri: { prefix: '/ns' } }],
            route: [{ destination: { host: 'reviews', port: { number: 9080 } } }],
          },
        ],
      ),
    ]),
  );
  const names = (ns: string, port: string) =>
    vhost(buildOutboundRoutes(ctx, ns).get(port), `${REVIEWS}:${port}`).routes?.map((r) => r.name);
  assert.deepEqual(names('default', '9080'), ['default']);
  assert.deepEqual(names('default', '9090'), ['p']);
  assert.deepEqual(names('team', '9080'), ['ns']);
});

test('routes after a catch-all are not emitted', () => {
  const { routes } = single({ name: 'all', route: [{ destination: { host: 'reviews' } }] });
  assert.deepEqual(
    routes.map((r) => r.name),
    ['all'],
  );
  const ctx = context(
    model(bookinfoServices(), [
      vs(
        'reviews',
        'default',
        ['reviews'],
        [
          { name: 'a', route: [{ destination: { host: 'reviews' } }] },
          { name: 'b', route: [{ destination: { host: 'reviews' } }] },
        ],
      ),
    ]),
  );
  assert.deepEqual(
    vhost(buildOutboundRoutes(ctx, 'default').get('9080'), `${REVIEWS}:9080`).routes?.map((r) => r.name),
    ['a'],
  );
});

test('every route configuration round-trips through protobuf', () => {
  const ctx = bookinfo('virtual-service-reviews-jason-v2-v3.yaml', 'virtual-service-ratings-test-delay.yaml');
  for (const rc of buildOutboundRoutes(ctx, 'default').values()) {
    const bytes = encodeMessage(TypeName.RouteConfiguration, rc);
    const decoded = decodeMessage(TypeName.RouteConfiguration, bytes) as RouteConfiguration;
    assert.deepEqual(encodeMessage(TypeName.RouteConfiguration, decoded), bytes);
    assert.deepEqual(
      decoded.virtual_hosts?.map((v) => [v.name, v.domains, v.routes?.length]),
      rc.virtual_hosts?.map((v) => [v.name, v.domains, v.routes?.length]),
    );
    assert.equal(
      decoded.virtual_hosts?.[2]?.routes?.[0]?.route?.cluster,
      rc.virtual_hosts?.[2]?.routes?.[0]?.route?.cluster,
    );
  }
});

test('output does not depend on input order', () => {
  const a = bookinfo('virtual-service-reviews-jason-v2-v3.yaml', 'virtual-service-ratings-test-abort.yaml');
  const b = bookinfo('virtual-service-ratings-test-abort.yaml', 'virtual-service-reviews-jason-v2-v3.yaml');
  const enc = (ctx: typeof a) =>
    [...buildOutboundRoutes(ctx, 'default').values()].map((rc) => encodeMessage(TypeName.RouteConfiguration, rc));
  assert.deepEqual(enc(a), enc(b));
});

test('10k services: one route config per port with a virtual host per service, plus allow_any', () => {
  const services = Array.from({ length: 10_000 }, (_, i) =>
    service(`svc${i}`, `ns${i % 50}`, [[8080, 'HTTP']], `10.1.${i >> 8}.${i & 255}`),
  );
  const vss = Array.from({ length: 1000 }, (_, i) =>
    vs(
      `vs${i}`,
      `ns${i % 50}`,
      [`svc${i}`],
      [
        { match: [{ headers: { u: { exact: 'x' } } }], route: [{ destination: { host: `svc${i}` } }] },
        { route: [{ destination: { host: `svc${i}` } }] },
      ],
    ),
  );
  const ctx = context(model(services, vss));
  const rc = buildOutboundRoutes(ctx, 'ns0').get('8080');
  assert.equal(rc?.virtual_hosts?.length, 10_001); // speed: bench/, not a timed test
});

/**
 * MeshConfig fields that change the served xDS, from a mesh config YAML and a small mesh to what a
 * proxy is served (the pipeline's Envoy check runs on every compile here): defaultHttpRetryPolicy
 * (istiod's applyHTTPRouteDestination and BuildDefaultHTTPOutboundRoute), accessLogFile /
 * accessLogEncoding / accessLogFormat (accesslog.go, FileAccessLogFromMeshConfig) and
 * protocolDetectionTimeout (buildListenerFromEntry, buildInboundListener).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileTexts, type PipelineResult } from '../../src/pipeline.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { gatewayYaml, INGRESS_NODE, MESH_YAML } from '../helpers/gateway-sim.js';
import { BOOKINFO_NODES, compileBookinfoClean, served, type TestNode } from '../helpers/mesh.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- walks decoded config_dump JSON */

const configMap = (mesh: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: { name: istio, namespace: istio-system }\ndata:\n  mesh: |\n${mesh
    .trim()
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n')}\n`;
const meshKind = (spec: string) =>
  `apiVersion: meshsnap.dev/v1alpha1\nkind: MeshConfig\nmetadata: { name: mesh }\nspec:\n${spec
    .trim()
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n')}\n`;

const bookinfo = compileBookinfoClean;

const resources = (r: PipelineResult, node: TestNode = BOOKINFO_NODES.productpage) => served(r, node).resources;

/** The route named `name` (or the first) of the virtual host for `host` in route config `rc`. */
function routeOf(r: PipelineResult, rc: string, host: string): any {
  const config: any = resources(r).routes.get(rc);
  const vh = config.virtual_hosts.find((v: any) => v.domains.includes(host));
  assert.ok(vh, `virtual host ${host} in ${rc}`);
  return vh.routes[0].route;
}

const REVIEWS_VS = `---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: { name: reviews, namespace: default }
spec:
  hosts: [reviews]
  http:
  - route: [{ destination: { host: reviews } }]
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: { name: ratings, namespace: default }
spec:
  hosts: [ratings]
  http:
  - retries: { attempts: 1, retryOn: reset }
    route: [{ destination: { host: ratings } }]
`;

test('defaultHttpRetryPolicy: routes without retries and default routes take it whole; a route with retries keeps its own', () => {
  const without = bookinfo(REVIEWS_VS);
  const meshPolicy = configMap(`
defaultHttpRetryPolicy:
  attempts: 4
  perTryTimeout: 2s
  retryOn: gateway-error,503
  retryRemoteLocalities: true
`);
  const r = bookinfo(meshPolicy, REVIEWS_VS);
  const expected = {
    retry_on: 'gateway-error,retriable-status-codes',
    num_retries: 4,
    per_try_timeout: '2s',
    retriable_status_codes: [503],
    retry_host_predicate: [
      {
        name: 'envoy.retry_host_predicates.previous_hosts',
        typed_config: {
          '@type': 'type.googleapis.com/envoy.extensions.retry.host.previous_hosts.v3.PreviousHostsPredicate',
        },
      },
    ],
    host_selection_retry_max_attempts: '5',
    retry_priority: {
      name: 'envoy.retry_priorities.previous_priorities',
      typed_config: {
        '@type': 'type.googleapis.com/envoy.extensions.retry.priority.previous_priorities.v3.PreviousPrioritiesConfig',
      },
    },
  };
  // A VirtualService route without `retries`, and the default route of a service without one.
  const reviews = routeOf(r, '9080', 'reviews.default.svc.cluster.local');
  const details = routeOf(r, '9080', 'details.default.svc.cluster.local');
  for (const route of [reviews, details]) {
    const { retry_priority, ...rest } = route.retry_policy;
    assert.deepEqual(
      {
        ...rest,
        retry_priority: { name: retry_priority.name, typed_config: { '@type': retry_priority.typed_config['@type'] } },
      },
      expected,
    );
  }
  // The route's own retries replace the mesh's, field by field nothing merges (istiod: `policy := in.Retries`).
  const ratings = routeOf(r, '9080', 'ratings.default.svc.cluster.local');
  assert.deepEqual(ratings.retry_policy, routeOf(without, '9080', 'ratings.default.svc.cluster.local').retry_policy);
  assert.equal(ratings.retry_policy.num_retries, 1);
  // Without the mesh field, istiod's own default (2 attempts) as before.
  assert.equal(routeOf(without, '9080', 'details.default.svc.cluster.local').retry_policy.num_retries, 2);

  // `attempts: 0` switches retries off mesh-wide, for the default routes too.
  const off = bookinfo(meshKind('defaultHttpRetryPolicy: { attempts: 0 }'), REVIEWS_VS);
  assert.equal(routeOf(off, '9080', 'reviews.default.svc.cluster.local').retry_policy, undefined);
  assert.equal(routeOf(off, '9080', 'details.default.svc.cluster.local').retry_policy, undefined);
  assert.equal(routeOf(off, '9080', 'ratings.default.svc.cluster.local').retry_policy.num_retries, 1);
});

/** Every network filter of a listener, with the name of its chain. */
function filtersOf(l: any): { chain: string; name: string; config: any }[] {
  const chains = [...(l.filter_chains ?? []), ...(l.default_filter_chain ? [l.default_filter_chain] : [])];
  return chains.flatMap((c: any) =>
    (c.filters ?? []).map((f: any) => ({ chain: c.name ?? '', name: f.name, config: f.typed_config })),
  );
}
const LOGGED = new Set(['envoy.filters.network.tcp_proxy', 'envoy.filters.network.http_connection_manager']);

const ISTIO_TEXT_FORMAT =
  '[%START_TIME%] "%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% %PROTOCOL%" %RESPONSE_CODE% %RESPONSE_FLAGS% %RESPONSE_CODE_DETAILS% %CONNECTION_TERMINATION_DETAILS% "%UPSTREAM_TRANSPORT_FAILURE_REASON%" %BYTES_RECEIVED% %BYTES_SENT% %DURATION% %RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)% "%REQ(X-FORWARDED-FOR)%" "%REQ(USER-AGENT)%" "%REQ(X-REQUEST-ID)%" "%REQ(:AUTHORITY)%" "%UPSTREAM_HOST%" %UPSTREAM_CLUSTER_RAW% %UPSTREAM_LOCAL_ADDRESS% %DOWNSTREAM_LOCAL_ADDRESS% %DOWNSTREAM_REMOTE_ADDRESS% %REQUESTED_SERVER_NAME% %ROUTE_NAME%\n';

const fileLog = (path: string, logFormat: unknown) => ({
  name: 'envoy.access_loggers.file',
  typed_config: {
    '@type': 'type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog',
    path,
    log_format: logFormat,
  },
});

test('accessLogFile: the file logger on every HCM and tcp_proxy of a sidecar but the blackhole chains, NR logger on the virtual listeners', () => {
  const r = bookinfo(configMap('accessLogFile: /dev/stdout'));
  const log = fileLog('/dev/stdout', { text_format_source: { inline_string: ISTIO_TEXT_FORMAT } });
  const listeners = resources(r).listeners;
  let logged = 0;
  for (const [name, l] of listeners as Map<string, any>) {
    for (const f of filtersOf(l)) {
      if (!LOGGED.has(f.name)) continue;
      if (f.chain === 'virtualOutbound-blackhole' || f.chain === 'virtualInbound-blackhole')
        assert.equal(f.config.access_log, undefined, `${name} ${f.chain}`);
      else {
        assert.deepEqual(f.config.access_log, [log], `${name} ${f.chain} ${f.name}`);
        logged++;
      }
    }
    const nr = { ...log, filter: { response_flag_filter: { flags: ['NR'] } } };
    if (name === 'virtualOutbound' || name === 'virtualInbound') assert.deepEqual(l.access_log, [nr], name);
    else assert.equal(l.access_log, undefined, name);
  }
  assert.ok(logged >= 8, `${logged} logged filters`);
  // Without the field: no logger anywhere.
  assert.ok(!JSON.stringify([...resources(bookinfo()).listeners.values()]).includes('access_log'));
  // Proxyless gRPC clients get none (istiod's grpcgen).
  const grpc = resources(r, BOOKINFO_NODES.grpcClient);
  assert.ok(grpc.listeners.size > 0);
  assert.ok(!JSON.stringify([...grpc.listeners.values(), ...grpc.routes.values()]).includes('access_log'));
});

test('accessLogEncoding JSON: istiod default JSON format, or the given object; TEXT format gets its newline', () => {
  const hcmLog = (r: PipelineResult) => {
    const l: any = resources(r).listeners.get('0.0.0.0_9080');
    return filtersOf(l).find((f) => f.name === 'envoy.filters.network.http_connection_manager')?.config.access_log;
  };
  const json = hcmLog(bookinfo(meshKind('accessLogFile: /var/log/mesh.log\naccessLogEncoding: JSON')));
  const fmt = json[0].typed_config.log_format;
  assert.deepEqual(fmt.json_format_options, {});
  assert.equal(Object.keys(fmt.json_format).length, 24);
  assert.equal(fmt.json_format.upstream_cluster, '%UPSTREAM_CLUSTER_RAW%');
  assert.equal(fmt.json_format.path, '%REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%');

  const custom = hcmLog(
    bookinfo(
      meshKind(
        `accessLogFile: /dev/stdout\naccessLogEncoding: JSON\naccessLogFormat: '{"path": "%REQ_WITHOUT_QUERY(:PATH)%", "up": {"host": "%UPSTREAM_HOST%"}, "n": 1}'`,
      ),
    ),
  );
  assert.deepEqual(custom, [
    fileLog('/dev/stdout', {
      json_format: { n: 1, path: '%REQ_WITHOUT_QUERY(:PATH)%', up: { host: '%UPSTREAM_HOST%' } },
      formatters: [
        {
          name: 'envoy.formatter.req_without_query',
          typed_config: {
            '@type': 'type.googleapis.com/envoy.extensions.formatter.req_without_query.v3.ReqWithoutQuery',
          },
        },
      ],
      json_format_options: {},
    }),
  ]);

  const text = hcmLog(bookinfo(configMap(`accessLogFile: /dev/stdout\naccessLogFormat: "%START_TIME% %ROUTE_NAME%"`)));
  assert.deepEqual(text, [
    fileLog('/dev/stdout', { text_format_source: { inline_string: '%START_TIME% %ROUTE_NAME%\n' } }),
  ]);
});

test('accessLogFile on a gateway: HCM, tcp_proxy and an NR logger on each listener', () => {
  const r = compileTexts(
    [
      {
        file: 'gw.yaml',
        text:
          configMap('accessLogFile: /dev/stdout') +
          '---\n' +
          MESH_YAML +
          gatewayYaml(
            'gw',
            'istio-system',
            `port: { number: 80, name: http, protocol: HTTP }\nhosts: ['*']`,
            `port: { number: 31400, name: tcp, protocol: TCP }\nhosts: ['*']`,
          ) +
          `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: { name: vs, namespace: default }
spec:
  hosts: ['*']
  gateways: [istio-system/gw]
  http: [{ route: [{ destination: { host: a.default.svc.cluster.local } }] }]
  tcp: [{ match: [{ port: 31400 }], route: [{ destination: { host: b.default.svc.cluster.local, port: { number: 80 } } }] }]
`,
      },
    ],
    { hasher: nodeSha256Hex },
  );
  const listeners = resources(r, INGRESS_NODE).listeners as Map<string, any>;
  assert.deepEqual([...listeners.keys()].sort(), ['0.0.0.0_31400', '0.0.0.0_80']);
  for (const [name, l] of listeners) {
    assert.deepEqual(l.access_log?.[0]?.filter, { response_flag_filter: { flags: ['NR'] } }, name);
    const logged = filtersOf(l).filter((f) => LOGGED.has(f.name));
    assert.equal(logged.length, 1, name);
    assert.equal(logged[0]?.config.access_log?.[0]?.typed_config.path, '/dev/stdout', name);
  }
});

test('protocolDetectionTimeout: on virtualInbound and the outbound listeners that sniff HTTP, none elsewhere', () => {
  const timeouts = (r: PipelineResult) =>
    Object.fromEntries(
      [...(resources(r).listeners as Map<string, any>)].map(([n, l]) => [n, l.listener_filters_timeout ?? null]),
    );
  const before = timeouts(bookinfo());
  const after = timeouts(bookinfo(configMap('protocolDetectionTimeout: 1500ms')));
  for (const [name, t] of Object.entries(before)) {
    const l: any = resources(bookinfo()).listeners.get(name);
    const sniffs =
      name === 'virtualInbound' ||
      (l.listener_filters ?? []).some((f: any) => f.name === 'envoy.filters.listener.http_inspector');
    if (name === 'virtualOutbound') assert.equal(after[name], null);
    else {
      assert.equal(t, '0s', name);
      assert.equal(after[name], sniffs ? '1.5s' : '0s', name);
    }
  }
  assert.equal(after['0.0.0.0_9080'], '1.5s');
  assert.equal(after['virtualInbound'], '1.5s');
});

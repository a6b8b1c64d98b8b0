/**
 * Telemetry access logging (telemetry.istio.io), from YAML to the served listeners: istiod's
 * Telemetries.AccessLogging (pilot/pkg/model/telemetry.go, telemetry_logging.go) and
 * accesslog.go. The provider table is istiod's TestAccessLogging, as facts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { meshConfigMap } from '../helpers/mesh-config-views.js';
import { compile } from '../../src/compile/index.js';
import { applyCompileDelta, IncrementalCompiler, withReplaced } from '../../src/compile/incremental.js';
import { indexAccessLogs } from '../../src/compile/listener/telemetry-logs.js';
import { Diagnostics } from '../../src/model/diagnostics.js';
import type { TelemetryLogMode } from '../../src/model/telemetry.js';
import { compileTexts, type PipelineResult } from '../../src/pipeline.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { gatewayYaml, INGRESS_NODE, MESH_YAML } from '../helpers/gateway-sim.js';
import {
  BOOKINFO_NODES,
  served,
  type TestNode,
  compileBookinfo,
  indentYaml,
  compileHelloworldGatewayApi,
  HELLOWORLD_GATEWAY_NODE,
} from '../helpers/mesh.js';
import { classifyNode } from '../../src/snapshot/classify.js';
import { loadText } from '../inputs/helpers.js';
import { assertChurnMatchesFull, assertSameOutput, bookinfoInputs } from './incremental-helpers.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- walks decoded config_dump JSON */

const indent = indentYaml;
const configMap = meshConfigMap;
const telemetry = (namespace: string, name: string, spec: string, apiVersion = 'telemetry.istio.io/v1') =>
  `apiVersion: ${apiVersion}\nkind: Telemetry\nmetadata: { name: ${name}, namespace: ${namespace} }\nspec:\n${indent(spec, '  ')}\n`;

/** A workload of namespace `other` (a sleep pod with its service). */
const OTHER = `apiVersion: v1
kind: Service
metadata: { name: sleep, namespace: other }
spec:
  selector: { app: sleep }
  ports: [{ name: http, port: 80, targetPort: 8080 }]
---
apiVersion: v1
kind: Pod
metadata:
  name: sleep-1
  namespace: other
  labels: { app: sleep, security.istio.io/tlsMode: istio }
spec:
  containers: [{ name: sleep, ports: [{ containerPort: 8080 }] }]
status:
  phase: Running
  podIP: 10.244.1.5
  podIPs: [{ ip: 10.244.1.5 }]
  conditions: [{ type: Ready, status: 'True' }]
`;
const SLEEP: TestNode = {
  id: 'sidecar~10.244.1.5~sleep-1.other~other.svc.cluster.local',
  metadata: {
    NAMESPACE: 'other',
    LABELS: { app: 'sleep', 'security.istio.io/tlsMode': 'istio' },
    INSTANCE_IPS: '10.244.1.5',
  },
};

const bookinfo = compileBookinfo;
const problems = (r: PipelineResult) =>
  r.diagnostics.filter((d) => d.severity !== 'info').map((d) => `${d.code} ${d.kind ?? ''} ${d.name ?? ''} ${d.field}`);

const listenersOf = (r: PipelineResult, node: TestNode = BOOKINFO_NODES.productpage) =>
  served(r, node).resources.listeners as Map<string, any>;

function filtersOf(l: any): { chain: string; name: string; config: any }[] {
  const chains = [...(l.filter_chains ?? []), ...(l.default_filter_chain ? [l.default_filter_chain] : [])];
  return chains.flatMap((c: any) =>
    (c.filters ?? []).map((f: any) => ({ chain: c.name ?? '', name: f.name, config: f.typed_config })),
  );
}
const LOGGED = new Set(['envoy.filters.network.tcp_proxy', 'envoy.filters.network.http_connection_manager']);
const OUTBOUND_CHAIN = (l: string) => l !== 'virtualInbound';

/** The access log paths of every logged filter, by `in`/`out` side. */
function logPaths(r: PipelineResult, node?: TestNode): { in: Set<string>; out: Set<string>; listener: Set<string> } {
  const out = { in: new Set<string>(), out: new Set<string>(), listener: new Set<string>() };
  for (const [name, l] of listenersOf(r, node)) {
    for (const f of filtersOf(l)) {
      if (!LOGGED.has(f.name) || f.chain.endsWith('-blackhole')) continue;
      const paths = (f.config.access_log ?? []).map((a: any) => a.typed_config.path).join(',');
      (OUTBOUND_CHAIN(name) ? out.out : out.in).add(paths);
    }
    if (name === 'virtualOutbound' || name === 'virtualInbound')
      out.listener.add(`${name}:${(l.access_log ?? []).map((a: any) => a.typed_config.path).join(',')}`);
  }
  return out;
}

const ISTIO_TEXT_FORMAT =
  '[%START_TIME%] "%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% %PROTOCOL%" %RESPONSE_CODE% %RESPONSE_FLAGS% %RESPONSE_CODE_DETAILS% %CONNECTION_TERMINATION_DETAILS% "%UPSTREAM_TRANSPORT_FAILURE_REASON%" %BYTES_RECEIVED% %BYTES_SENT% %DURATION% %RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)% "%REQ(X-FORWARDED-FOR)%" "%REQ(USER-AGENT)%" "%REQ(X-REQUEST-ID)%" "%REQ(:AUTHORITY)%" "%UPSTREAM_HOST%" %UPSTREAM_CLUSTER_RAW% %UPSTREAM_LOCAL_ADDRESS% %DOWNSTREAM_LOCAL_ADDRESS% %DOWNSTREAM_REMOTE_ADDRESS% %REQUESTED_SERVER_NAME% %ROUTE_NAME%\n';
const fileLog = (path: string, logFormat?: unknown) => ({
  name: 'envoy.access_loggers.file',
  typed_config: {
    '@type': 'type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog',
    path,
    ...(logFormat !== undefined ? { log_format: logFormat } : {}),
  },
});
const NR = { response_flag_filter: { flags: ['NR'] } };
const ENVOY_ROOT = telemetry('istio-system', 'mesh-default', 'accessLogging: [{ providers: [{ name: envoy }] }]');

test("a root-namespace Telemetry naming the built-in envoy provider: /dev/stdout in istiod's format on every HCM and tcp_proxy, NR logger on the virtual listeners", () => {
  for (const version of ['telemetry.istio.io/v1', 'telemetry.istio.io/v1alpha1']) {
    const r = bookinfo(
      telemetry('istio-system', 'mesh-default', 'accessLogging: [{ providers: [{ name: envoy }] }]', version),
    );
    assert.deepEqual(problems(r), []);
    const log = fileLog('/dev/stdout', { text_format_source: { inline_string: ISTIO_TEXT_FORMAT } });
    let logged = 0;
    for (const [name, l] of listenersOf(r)) {
      for (const f of filtersOf(l)) {
        if (!LOGGED.has(f.name)) continue;
        if (f.chain.endsWith('-blackhole')) assert.equal(f.config.access_log, undefined, `${name} ${f.chain}`);
        else {
          assert.deepEqual(f.config.access_log, [log], `${name} ${f.chain}`);
          logged++;
        }
      }
      if (name === 'virtualOutbound' || name === 'virtualInbound')
        assert.deepEqual(l.access_log, [{ ...log, filter: NR }], name);
      else assert.equal(l.access_log, undefined, name);
    }
    assert.ok(logged >= 8, `${logged} logged filters`);
    // Proxyless gRPC clients get none (grpcgen).
    const grpc = served(r, BOOKINFO_NODES.grpcClient).resources;
    assert.ok(!JSON.stringify([...grpc.listeners.values(), ...grpc.routes.values()]).includes('access_log'));
  }
  // The same from the mesh config's defaultProviders, and it replaces accessLogFile.
  const byDefault = bookinfo(
    configMap('accessLogFile: /var/log/legacy.log\ndefaultProviders:\n  accessLogging: [envoy]'),
  );
  assert.deepEqual(problems(byDefault), []);
  assert.deepEqual(logPaths(byDefault), {
    in: new Set(['/dev/stdout']),
    out: new Set(['/dev/stdout']),
    listener: new Set(['virtualOutbound:/dev/stdout', 'virtualInbound:/dev/stdout']),
  });
  // Without any: nothing, as before.
  assert.ok(!JSON.stringify([...listenersOf(bookinfo()).values()]).includes('access_log'));
});

test('the built-in envoy provider takes the mesh accessLogEncoding / accessLogFormat; a provider of its own keeps its format', () => {
  const hcmLog = (r: PipelineResult) =>
    filtersOf(listenersOf(r).get('0.0.0.0_9080')).find(
      (f) => f.name === 'envoy.filters.network.http_connection_manager',
    )?.config.access_log;
  const json = hcmLog(
    bookinfo(configMap('accessLogEncoding: JSON\naccessLogFormat: \'{"m": "%REQ(:METHOD)%"}\''), ENVOY_ROOT),
  );
  assert.deepEqual(json, [fileLog('/dev/stdout', { json_format: { m: '%REQ(:METHOD)%' }, json_format_options: {} })]);

  const providers = `extensionProviders:
- name: b-text
  envoyFileAccessLog:
    path: /var/log/b.log
    logFormat: { text: "%START_TIME% %REQ_WITHOUT_QUERY(:PATH)%" }
- name: a-json
  envoyFileAccessLog:
    omitEmptyValues: true
    logFormat:
      labels: { code: "%RESPONSE_CODE%", nested: { n: 1 } }
- name: c-plain
  envoyFileAccessLog: {}
- name: d-none
  envoyFileAccessLog: { path: /var/log/d.log, logFormat: {} }`;
  const r = bookinfo(
    configMap(providers),
    telemetry(
      'istio-system',
      'mesh-default',
      'accessLogging: [{ providers: [{ name: c-plain }, { name: b-text }, { name: a-json }, { name: d-none }] }]',
    ),
  );
  assert.deepEqual(problems(r), []);
  // Sorted by provider name, as istiod sorts them.
  assert.deepEqual(hcmLog(r), [
    fileLog('/dev/stdout', {
      json_format: { code: '%RESPONSE_CODE%', nested: { n: 1 } },
      json_format_options: {},
      omit_empty_values: true,
    }),
    fileLog('/var/log/b.log', {
      text_format_source: { inline_string: '%START_TIME% %REQ_WITHOUT_QUERY(:PATH)%\n' },
      formatters: [
        {
          name: 'envoy.formatter.req_without_query',
          typed_config: {
            '@type': 'type.googleapis.com/envoy.extensions.formatter.req_without_query.v3.ReqWithoutQuery',
          },
        },
      ],
    }),
    fileLog('/dev/stdout', { text_format_source: { inline_string: ISTIO_TEXT_FORMAT } }),
    fileLog('/var/log/d.log'),
  ]);
});

test('match.mode: SERVER logs inbound only, the outbound side falls back to accessLogFile (no provider left), as istiod', () => {
  const r = bookinfo(
    configMap('accessLogFile: /var/log/legacy.log'),
    telemetry(
      'istio-system',
      'mesh-default',
      'accessLogging: [{ match: { mode: SERVER }, providers: [{ name: envoy }] }]',
    ),
  );
  assert.deepEqual(problems(r), []);
  assert.deepEqual(logPaths(r), {
    in: new Set(['/dev/stdout']),
    out: new Set(['/var/log/legacy.log']),
    listener: new Set(['virtualOutbound:/var/log/legacy.log', 'virtualInbound:/dev/stdout']),
  });
  const client = bookinfo(
    telemetry(
      'istio-system',
      'mesh-default',
      'accessLogging: [{ match: { mode: CLIENT }, providers: [{ name: envoy }] }]',
    ),
  );
  assert.deepEqual(logPaths(client), {
    in: new Set(['']),
    out: new Set(['/dev/stdout']),
    listener: new Set(['virtualOutbound:/dev/stdout', 'virtualInbound:']),
  });
});

test('a namespace Telemetry applies to the proxies of its namespace only, over the root one; disabled turns logs off, accessLogFile too', () => {
  const r = bookinfo(
    OTHER,
    configMap('accessLogFile: /var/log/legacy.log'),
    ENVOY_ROOT,
    telemetry('default', 'quiet', 'accessLogging: [{ disabled: true }]'),
  );
  assert.deepEqual(problems(r), []);
  const none = { in: new Set(['']), out: new Set(['']), listener: new Set(['virtualOutbound:', 'virtualInbound:']) };
  assert.deepEqual(logPaths(r), none);
  assert.deepEqual(logPaths(r, BOOKINFO_NODES.reviewsV2), none);
  const stdout = {
    in: new Set(['/dev/stdout']),
    out: new Set(['/dev/stdout']),
    listener: new Set(['virtualOutbound:/dev/stdout', 'virtualInbound:/dev/stdout']),
  };
  assert.deepEqual(logPaths(r, SLEEP), stdout);

  // Only a namespace's own: its proxies log, the others do not.
  const own = bookinfo(OTHER, telemetry('other', 'logs', 'accessLogging: [{ providers: [{ name: envoy }] }]'));
  assert.deepEqual(problems(own), []);
  assert.deepEqual(logPaths(own, SLEEP), stdout);
  assert.ok(!JSON.stringify([...listenersOf(own).values()]).includes('access_log'));
});

/** The ingress gateway of gateway-sim's mesh with an HTTP server on 80 (Gateway istio-system/gw) routed to `a`, and `tel`. */
function compileIngress(tel: string): PipelineResult {
  const vs = `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: { name: vs, namespace: default }
spec:
  hosts: ['*']
  gateways: [istio-system/gw]
  http: [{ route: [{ destination: { host: a.default.svc.cluster.local } }] }]
`;
  const gateway = gatewayYaml('gw', 'istio-system', `port: { number: 80, name: http, protocol: HTTP }\nhosts: ['*']`);
  return compileTexts([{ file: 'gw.yaml', text: `${tel}---\n${MESH_YAML}${gateway}${vs}` }], { hasher: nodeSha256Hex });
}

test('gateways take the CLIENT mode logs of their namespace', () => {
  const logs = (tel: string) => {
    const l = listenersOf(compileIngress(tel), INGRESS_NODE).get('0.0.0.0_80');
    const hcm = filtersOf(l).find((f) => LOGGED.has(f.name));
    return { listener: l.access_log?.map((a: any) => a.filter), hcm: hcm?.config.access_log?.length ?? 0 };
  };
  assert.deepEqual(
    logs(telemetry('istio-system', 't', 'accessLogging: [{ match: { mode: CLIENT }, providers: [{ name: envoy }] }]')),
    { listener: [NR], hcm: 1 },
  );
  assert.deepEqual(
    logs(telemetry('istio-system', 't', 'accessLogging: [{ match: { mode: SERVER }, providers: [{ name: envoy }] }]')),
    { listener: undefined, hcm: 0 },
  );
});

test('not applied, and said so: targetRefs to waypoint or unknown kinds, filters and metrics, unknown and gRPC providers, a second namespace-wide one', () => {
  const r = bookinfo(
    configMap(
      `extensionProviders:\n- name: otel\n  envoyOtelAls: { service: otel.default.svc.cluster.local, port: 4317 }`,
    ),
    telemetry(
      'default',
      'by-service',
      'targetRef: { kind: Service, name: reviews }\naccessLogging: [{ providers: [{ name: envoy }] }]',
    ),
    telemetry(
      'default',
      'by-istio-gateway',
      'targetRefs: [{ group: networking.istio.io, kind: Gateway, name: reviews }]\naccessLogging: [{ providers: [{ name: envoy }] }]',
    ),
    telemetry(
      'istio-system',
      'a-mesh',
      "accessLogging: [{ providers: [{ name: otel }, { name: nope }], filter: { expression: 'response.code >= 400' } }]\ntracing: [{ randomSamplingPercentage: 10 }]\nmetrics: [{ providers: [{ name: prometheus }] }]",
    ),
    telemetry('istio-system', 'b-mesh', 'accessLogging: [{ providers: [{ name: envoy }] }]'),
  );
  assert.deepEqual(problems(r).sort(), [
    'conflicting-telemetry Telemetry b-mesh spec',
    'policy-not-applied Telemetry by-istio-gateway spec.targetRefs[0]',
    'unknown-provider Telemetry a-mesh spec.accessLogging[0].providers[1]',
    'unsupported-field Telemetry a-mesh spec.accessLogging[0].filter',
    'unsupported-field Telemetry a-mesh spec.metrics',
    'unsupported-field Telemetry by-service spec.targetRef',
    'unsupported-provider Telemetry a-mesh spec.accessLogging[0].providers[0]',
  ]);
  // The oldest (by name, without timestamps) applies: the OpenTelemetry provider, not built: no file log anywhere;
  // the targetRef ones select no sidecar (istiod's ShouldAttachPolicy), nor split a class off.
  assert.ok(!JSON.stringify([...listenersOf(r).values()]).includes('access_log'));
  assert.ok(!JSON.stringify([...listenersOf(r, BOOKINFO_NODES.reviewsV2).values()]).includes('access_log'));
  assert.equal(served(r, BOOKINFO_NODES.reviewsV2).classId, 'sidecar/default/reviews');
});

test('provider resolution: istiod TestAccessLogging cases', () => {
  const spec: Record<string, string> = {
    prometheus: 'metrics: [{ providers: [{ name: envoy }] }]',
    envoy: 'accessLogging: [{ providers: [{ name: envoy }] }]',
    client: 'accessLogging: [{ match: { mode: CLIENT }, providers: [{ name: envoy }] }]',
    clientDisabled: 'accessLogging: [{ match: { mode: CLIENT }, providers: [{ name: envoy }], disabled: true }]',
    server: 'accessLogging: [{ match: { mode: SERVER }, providers: [{ name: envoy }] }]',
    serverDisabled: 'accessLogging: [{ match: { mode: SERVER }, providers: [{ name: envoy }], disabled: true }]',
    serverAndClient: 'accessLogging: [{ match: { mode: CLIENT_AND_SERVER }, providers: [{ name: envoy }] }]',
    stackdriver: 'accessLogging: [{ providers: [{ name: stackdriver }] }]',
    empty: 'accessLogging: [{}]',
    defaultJSON: 'accessLogging: [{ providers: [{ name: envoy-json }] }]',
    disabled: 'accessLogging: [{ disabled: true }]',
    nonExistent: 'accessLogging: [{ providers: [{ name: custom-provider }] }]',
    multiAccessLogging: 'accessLogging: [{ providers: [{ name: envoy }] }, { providers: [{ name: envoy-json }] }]',
    multiAccessLoggingWithDisabled:
      'accessLogging: [{ providers: [{ name: envoy }] }, { providers: [{ name: envoy-json }], disabled: true }]',
    multiAccessLoggingAndProviders:
      'accessLogging: [{ providers: [{ name: envoy }, { name: envoy-json }] }, { providers: [{ name: envoy }] }]',
    multiFilters:
      'accessLogging: [{ match: { mode: SERVER }, providers: [{ name: envoy }] }, { match: { mode: CLIENT_AND_SERVER }, providers: [{ name: envoy }] }]',
    multiFiltersDisabled:
      'accessLogging: [{ match: { mode: SERVER }, providers: [{ name: envoy }] }, { match: { mode: CLIENT_AND_SERVER }, providers: [{ name: envoy }], disabled: true }]',
    serverAndClientDifferent:
      'accessLogging: [{ match: { mode: SERVER }, providers: [{ name: envoy }] }, { match: { mode: CLIENT }, providers: [{ name: envoy-json }] }]',
  };
  // [name, telemetries (namespace:spec), mode (gateway: CLIENT), default providers, want (undefined: accessLogFile)]
  const cases: [string, string[], TelemetryLogMode, string[], string[] | undefined][] = [
    ['empty', [], 'CLIENT', [], undefined],
    ['prometheus-mesh', ['istio-system:prometheus'], 'CLIENT', [], undefined],
    ['prometheus-namespace', ['default:prometheus'], 'CLIENT', [], undefined],
    ['default provider only', [], 'CLIENT', ['envoy'], ['envoy']],
    ['provider only', ['istio-system:envoy'], 'CLIENT', [], ['envoy']],
    ['client - gateway', ['istio-system:client'], 'CLIENT', [], ['envoy']],
    ['client - outbound', ['istio-system:client'], 'CLIENT', [], ['envoy']],
    ['client - inbound', ['istio-system:client'], 'SERVER', [], undefined],
    ['client - disabled server', ['istio-system:client', 'default:serverDisabled'], 'CLIENT', [], ['envoy']],
    ['client - disabled client', ['istio-system:client', 'default:clientDisabled'], 'CLIENT', [], []],
    ['server - gateway', ['istio-system:server'], 'CLIENT', [], undefined],
    ['server - inbound', ['istio-system:server'], 'SERVER', [], ['envoy']],
    ['server - outbound', ['istio-system:server'], 'CLIENT', [], undefined],
    ['server and client - inbound', ['istio-system:serverAndClient'], 'SERVER', [], ['envoy']],
    ['server and client - outbound', ['istio-system:serverAndClient'], 'CLIENT', [], ['envoy']],
    ['override default', ['istio-system:envoy'], 'CLIENT', ['stackdriver'], ['envoy']],
    ['override namespace', ['istio-system:envoy', 'default:defaultJSON'], 'CLIENT', [], ['envoy-json']],
    ['empty config inherits', ['istio-system:envoy', 'default:empty'], 'CLIENT', [], ['envoy']],
    ['stackdriver', ['istio-system:envoy', 'default:stackdriver'], 'CLIENT', [], undefined],
    ['default envoy JSON', ['istio-system:defaultJSON'], 'CLIENT', [], ['envoy-json']],
    ['disable config', ['istio-system:envoy', 'default:disabled'], 'CLIENT', [], []],
    ['disable default', ['default:disabled'], 'CLIENT', ['envoy'], []],
    ['non existing', ['default:nonExistent'], 'CLIENT', ['envoy'], undefined],
    ['server - multi filters', ['istio-system:multiFilters'], 'CLIENT', [], ['envoy']],
    ['server - multi filters disabled', ['istio-system:multiFiltersDisabled'], 'CLIENT', [], []],
    [
      'multi accesslogging',
      ['istio-system:envoy', 'default:multiAccessLogging'],
      'CLIENT',
      [],
      ['envoy', 'envoy-json'],
    ],
    [
      'multi accesslogging with disabled',
      ['istio-system:envoy', 'default:multiAccessLoggingWithDisabled'],
      'CLIENT',
      [],
      ['envoy'],
    ],
    [
      'multi accesslogging - multi providers',
      ['istio-system:envoy', 'default:multiAccessLoggingAndProviders'],
      'CLIENT',
      [],
      ['envoy', 'envoy-json'],
    ],
    ['server and client different - inbound', ['istio-system:serverAndClientDifferent'], 'SERVER', [], ['envoy']],
    ['server and client different - outbound', ['istio-system:serverAndClientDifferent'], 'CLIENT', [], ['envoy-json']],
  ];
  for (const [name, tels, mode, defaults, want] of cases) {
    const text = [
      configMap(
        `extensionProviders:\n- name: envoy-json\n  envoyFileAccessLog: { path: /dev/stdout, logFormat: { labels: {} } }` +
          (defaults.length ? `\ndefaultProviders: { accessLogging: [${defaults.join(', ')}] }` : ''),
      ),
      ...tels.map((t, i) => {
        const [ns, key] = t.split(':') as [string, string];
        return telemetry(ns, `t${i}`, spec[key] as string);
      }),
    ].join('---\n');
    const inputs = loadText(text);
    assert.deepEqual(
      inputs.diagnostics.filter((d) => d.severity === 'error'),
      [],
      name,
    );
    const index = indexAccessLogs(inputs.meshConfig, inputs.telemetries, new Diagnostics());
    assert.deepEqual(index.providers(mode, 'default'), want, name);
  }
});

test("incremental: endpoint churn patches a namespace's own outbound listeners; a Telemetry change compiles in full, equal to compile()", () => {
  const own = telemetry('default', 'own', 'accessLogging: [{ match: { mode: CLIENT }, disabled: true }]');
  const start = bookinfoInputs([['tel.yaml', `${ENVOY_ROOT}---\n${own}`]]);
  assertChurnMatchesFull(start, 7, 30, (output) =>
    assert.ok(
      [...output.groups.keys()].some((id) => id.startsWith('outbound-listeners/') && id.includes('ns:default')),
      [...output.groups.keys()].join(' '),
    ),
  );

  const ic = new IncrementalCompiler();
  let output = ic.compileFull(bookinfoInputs()).output;
  const added = loadText(own).telemetries[0];
  assert.ok(added);
  const next = withReplaced(bookinfoInputs(), 'Telemetry', added);
  const r = ic.update(next, [{ kind: 'Telemetry', namespace: 'default', name: 'own' }]);
  output = r.kind === 'delta' ? applyCompileDelta(output, r.delta, r.layout) : r.output;
  assertSameOutput(output, compile(next).output, 'Telemetry added');
});

/*
 * Workload-selected Telemetries: istiod's applicableTelemetries appends, after the root namespace's
 * and the proxy namespace's namespace-wide ones, every Telemetry of the proxy's namespace that
 * selects it (ShouldAttachPolicy: matchLabels for sidecars and gateways, a targetRef for the pods of
 * a Gateway API Gateway), oldest first, each a level of mergeLogs.
 */
const FILE_PROVIDERS = `accessLogFile: /var/log/legacy.log
extensionProviders:
- name: file-a
  envoyFileAccessLog: { path: /var/log/a.log }
- name: file-b
  envoyFileAccessLog: { path: /var/log/b.log }
- name: ns-file
  envoyFileAccessLog: { path: /var/log/ns.log }`;
const REVIEWS_V1: TestNode = {
  id: 'sidecar~10.244.0.13~reviews-v1-5f6d7c8b9-abcde.default~default.svc.cluster.local',
  metadata: {
    NAMESPACE: 'default',
    LABELS: { app: 'reviews', version: 'v1', 'security.istio.io/tlsMode': 'istio' },
    INSTANCE_IPS: '10.244.0.13',
  },
};
/** A Telemetry of namespace default created at `created` (istiod's order: creation time, then name). */
const stamped = (name: string, created: string, spec: string) =>
  `apiVersion: telemetry.istio.io/v1\nkind: Telemetry\nmetadata: { name: ${name}, namespace: default, creationTimestamp: '${created}' }\nspec:\n${indent(spec, '  ')}\n`;
/** The one path set of each side (every logged filter of a side logs the same). */
const sides = (r: PipelineResult, node: TestNode) => {
  const p = logPaths(r, node);
  return { in: [...p.in].join('|'), out: [...p.out].join('|') };
};

test("a Telemetry selecting workloads by label gives them, not the namespace's other workloads, its access logs; nodes with matching LABELS are placed in its class", () => {
  const r = bookinfo(
    configMap(FILE_PROVIDERS),
    telemetry(
      'default',
      'reviews-logs',
      'selector: { matchLabels: { app: reviews } }\naccessLogging: [{ providers: [{ name: file-b }] }]',
    ),
  );
  assert.deepEqual(problems(r), []);
  for (const node of [BOOKINFO_NODES.reviewsV2, REVIEWS_V1]) {
    assert.equal(served(r, node).classId, 'sidecar/default/reviews/telemetry:default/reviews-logs');
    assert.deepEqual(sides(r, node), { in: '/var/log/b.log', out: '/var/log/b.log' });
    assert.ok(logPaths(r, node).listener.has('virtualOutbound:/var/log/b.log'));
  }
  // productpage: not selected, the mesh's accessLogFile as before (no Telemetry applies to it).
  assert.equal(served(r, BOOKINFO_NODES.productpage).classId, 'sidecar/default/productpage');
  assert.deepEqual(sides(r, BOOKINFO_NODES.productpage), { in: '/var/log/legacy.log', out: '/var/log/legacy.log' });
  // A reviews proxy whose pod the compile has not seen (another version) is placed by its labels.
  const v9: TestNode = {
    id: 'sidecar~10.244.0.99~reviews-v9-1.default~default.svc.cluster.local',
    metadata: { NAMESPACE: 'default', LABELS: { app: 'reviews', version: 'v9' }, INSTANCE_IPS: '10.244.0.99' },
  };
  const placed = classifyNode(r.snapshot.content, v9);
  assert.deepEqual(placed.ok && placed.classId, 'sidecar/default/reviews/telemetry:default/reviews-logs');
  assert.deepEqual(sides(r, v9), { in: '/var/log/b.log', out: '/var/log/b.log' });
  // The relay's selectors name the Telemetry's labels in its namespace.
  assert.deepEqual(
    r.snapshot.content.selectors.filter((s) => s.policy?.startsWith('telemetry:')),
    [{ namespace: 'default', hostname: '', selector: { app: 'reviews' }, policy: 'telemetry:default/reviews-logs' }],
  );
  // A selector matching no label of a proxy in another namespace: the same labels elsewhere are not selected.
  const otherReviews: TestNode = {
    id: 'sidecar~10.244.1.5~sleep-1.other~other.svc.cluster.local',
    metadata: { NAMESPACE: 'other', LABELS: { app: 'reviews' }, INSTANCE_IPS: '10.244.1.5' },
  };
  const r2 = bookinfo(
    OTHER,
    configMap(FILE_PROVIDERS),
    telemetry(
      'default',
      'reviews-logs',
      'selector: { matchLabels: { app: reviews } }\naccessLogging: [{ providers: [{ name: file-b }] }]',
    ),
  );
  assert.equal(served(r2, otherReviews).classId, 'sidecar/other/_');
  assert.deepEqual(sides(r2, otherReviews).out, '/var/log/legacy.log');
});

test('a workload-selected Telemetry comes after the root and namespace ones: its providers replace theirs per mode, its disabled entry turns the inherited one off', () => {
  const root = telemetry('istio-system', 'mesh', 'accessLogging: [{ providers: [{ name: file-a }] }]');
  const ns = telemetry('default', 'ns', 'accessLogging: [{ providers: [{ name: ns-file }] }]');
  const server = telemetry(
    'default',
    'reviews-server',
    'selector: { matchLabels: { app: reviews } }\naccessLogging: [{ match: { mode: SERVER }, providers: [{ name: file-b }] }]',
  );
  const r = bookinfo(configMap(FILE_PROVIDERS), root, ns, server);
  assert.deepEqual(problems(r), []);
  // SERVER (inbound): the workload's file-b; CLIENT (outbound): the namespace's, which replaced the root's.
  assert.deepEqual(sides(r, BOOKINFO_NODES.reviewsV2), { in: '/var/log/b.log', out: '/var/log/ns.log' });
  assert.deepEqual(sides(r, BOOKINFO_NODES.productpage), { in: '/var/log/ns.log', out: '/var/log/ns.log' });
  // The selected workloads' outbound listeners are their own; the namespace's others share theirs.
  const classes = r.snapshot.content.classes;
  const groupsOf = (id: string) => classes.find((c) => c.id === id)?.groups ?? [];
  assert.ok(
    groupsOf('sidecar/default/reviews/telemetry:default/reviews-server').includes(
      'outbound-listeners/ns:default,telemetry:default/reviews-server',
    ),
  );
  assert.ok(groupsOf('sidecar/default/productpage').includes('outbound-listeners/ns:default'));

  // An entry without providers takes the previous entry's (the namespace's ns-file) and disables it:
  // no access log at all, not the mesh's accessLogFile (istiod: a disabled config is a config).
  const off = telemetry(
    'default',
    'reviews-off',
    'selector: { matchLabels: { app: reviews } }\naccessLogging: [{ disabled: true }]',
  );
  const r2 = bookinfo(configMap(FILE_PROVIDERS), root, ns, off);
  assert.deepEqual(sides(r2, BOOKINFO_NODES.reviewsV2), { in: '', out: '' });
  assert.deepEqual(sides(r2, BOOKINFO_NODES.productpage), { in: '/var/log/ns.log', out: '/var/log/ns.log' });
  // Without a namespace-wide one: it overrides the root's directly.
  const r3 = bookinfo(configMap(FILE_PROVIDERS), root, server);
  assert.deepEqual(sides(r3, BOOKINFO_NODES.reviewsV2), { in: '/var/log/b.log', out: '/var/log/a.log' });
  assert.deepEqual(sides(r3, BOOKINFO_NODES.productpage), { in: '/var/log/a.log', out: '/var/log/a.log' });
});

test('several Telemetries select a workload: each is a level, oldest first (creationTimestamp, not name)', () => {
  const all = (created: string) =>
    stamped(
      'a-all',
      created,
      'selector: { matchLabels: { app: reviews } }\naccessLogging: [{ providers: [{ name: file-a }] }]',
    );
  const v2Off = (created: string) =>
    stamped('b-v2', created, 'selector: { matchLabels: { version: v2 } }\naccessLogging: [{ disabled: true }]');
  // a-all first, then b-v2 disables the provider it inherits (file-a): v2 logs nothing, v1 logs file-a.
  const r = bookinfo(configMap(FILE_PROVIDERS), all('2024-01-01T00:00:00Z'), v2Off('2024-02-01T00:00:00Z'));
  assert.deepEqual(problems(r), []);
  assert.equal(
    served(r, BOOKINFO_NODES.reviewsV2).classId,
    'sidecar/default/reviews/telemetry:default/a-all,telemetry:default/b-v2',
  );
  assert.deepEqual(sides(r, BOOKINFO_NODES.reviewsV2), { in: '', out: '' });
  assert.deepEqual(sides(r, REVIEWS_V1), { in: '/var/log/a.log', out: '/var/log/a.log' });
  // b-v2 older: its entry has no provider to inherit (no default), then a-all turns file-a on.
  const swapped = bookinfo(configMap(FILE_PROVIDERS), all('2024-02-01T00:00:00Z'), v2Off('2024-01-01T00:00:00Z'));
  assert.deepEqual(sides(swapped, BOOKINFO_NODES.reviewsV2), { in: '/var/log/a.log', out: '/var/log/a.log' });
});

test("a root-namespace Telemetry with a selector selects only the root namespace's workloads", () => {
  const r = bookinfo(
    configMap(FILE_PROVIDERS),
    telemetry(
      'istio-system',
      'root-reviews',
      'selector: { matchLabels: { app: reviews } }\naccessLogging: [{ providers: [{ name: file-b }] }]',
    ),
  );
  assert.equal(served(r, BOOKINFO_NODES.reviewsV2).classId, 'sidecar/default/reviews');
  assert.deepEqual(sides(r, BOOKINFO_NODES.reviewsV2), { in: '/var/log/legacy.log', out: '/var/log/legacy.log' });
});

test('gateways: a Telemetry selecting the gateway pods by label, or the pods of a Gateway API Gateway by targetRef', () => {
  const logs = (r: PipelineResult, node: TestNode, listener: string) => {
    const l = listenersOf(r, node).get(listener);
    assert.ok(l, listener);
    const hcm = filtersOf(l).find((f) => LOGGED.has(f.name));
    return { listener: l.access_log?.map((a: any) => a.filter), hcm: hcm?.config.access_log?.length ?? 0 };
  };
  const bySelector = compileIngress(
    telemetry(
      'istio-system',
      'ingress-logs',
      'selector: { matchLabels: { istio: ingressgateway } }\naccessLogging: [{ providers: [{ name: envoy }] }]',
    ),
  );
  assert.deepEqual(problems(bySelector), []);
  assert.match(
    served(bySelector, INGRESS_NODE).classId,
    /^router\/istio-system\/.*\/telemetry:istio-system\/ingress-logs$/,
  );
  assert.deepEqual(logs(bySelector, INGRESS_NODE, '0.0.0.0_80'), { listener: [NR], hcm: 1 });
  const other = compileIngress(
    telemetry(
      'istio-system',
      'other-logs',
      'selector: { matchLabels: { istio: egressgateway } }\naccessLogging: [{ providers: [{ name: envoy }] }]',
    ),
  );
  assert.deepEqual(logs(other, INGRESS_NODE, '0.0.0.0_80'), { listener: undefined, hcm: 0 });
  // A targetRef attaches only to a Gateway API Gateway's pods: the Istio gateway pod is not selected.
  const byRef = compileIngress(
    telemetry(
      'istio-system',
      'ref-logs',
      'targetRef: { group: gateway.networking.k8s.io, kind: Gateway, name: istio-ingressgateway }\naccessLogging: [{ providers: [{ name: envoy }] }]',
    ),
  );
  assert.deepEqual(logs(byRef, INGRESS_NODE, '0.0.0.0_80'), { listener: undefined, hcm: 0 });

  // Gateway API: the pods labelled gateway.networking.k8s.io/gateway-name: helloworld-gateway.
  const helloworld = compileHelloworldGatewayApi;
  const GW_NODE = HELLOWORLD_GATEWAY_NODE;
  const ref = (name: string, kind = 'Gateway') =>
    telemetry(
      'default',
      'gw-logs',
      `targetRefs: [{ group: gateway.networking.k8s.io, kind: ${kind}, name: ${name} }]\naccessLogging: [{ providers: [{ name: envoy }] }]`,
    );
  const attached = helloworld(ref('helloworld-gateway'));
  assert.match(served(attached, GW_NODE).classId, /\/telemetry:default\/gw-logs$/);
  const listener = [...listenersOf(attached, GW_NODE).keys()][0] as string;
  assert.deepEqual(logs(attached, GW_NODE, listener), { listener: [NR], hcm: 1 });
  for (const [what, r] of [
    ['another Gateway', helloworld(ref('other-gateway'))],
    ['no Telemetry', helloworld('')],
  ] as const) {
    assert.doesNotMatch(served(r, GW_NODE).classId, /telemetry:/, what);
    assert.deepEqual(logs(r, GW_NODE, listener), { listener: undefined, hcm: 0 }, what);
  }
  // The same labels as a selector (ENABLE_SELECTOR_BASED_K8S_GATEWAY_POLICY, on by default).
  const bySelectorApi = helloworld(
    telemetry(
      'default',
      'gw-logs',
      "selector: { matchLabels: { 'gateway.networking.k8s.io/gateway-name': helloworld-gateway } }\naccessLogging: [{ providers: [{ name: envoy }] }]",
    ),
  );
  assert.deepEqual(logs(bySelectorApi, GW_NODE, listener), { listener: [NR], hcm: 1 });
});

test('incremental: a workload-selected Telemetry keeps endpoint churn equal to a full compile; adding one compiles in full, equal to compile()', () => {
  const tels = `${telemetry('default', 'ns', 'accessLogging: [{ providers: [{ name: envoy }] }]')}---\n${telemetry(
    'default',
    'reviews-off',
    'selector: { matchLabels: { app: reviews } }\naccessLogging: [{ match: { mode: CLIENT }, disabled: true }]',
  )}`;
  assertChurnMatchesFull(bookinfoInputs([['tel.yaml', tels]]), 11, 30, (output) => {
    const ids = [...output.groups.keys()];
    assert.ok(ids.includes('outbound-listeners/ns:default,telemetry:default/reviews-off'), ids.join(' '));
    assert.ok(
      ids.some((id) => id.startsWith('inbound/default/reviews/') && id.includes('telemetry:default/reviews-off')),
    );
  });

  const ic = new IncrementalCompiler();
  let output = ic.compileFull(bookinfoInputs()).output;
  const added = loadText(
    telemetry(
      'default',
      'reviews-logs',
      'selector: { matchLabels: { app: reviews } }\naccessLogging: [{ providers: [{ name: envoy }] }]',
    ),
  ).telemetries[0];
  assert.ok(added);
  const next = withReplaced(bookinfoInputs(), 'Telemetry', added);
  const r = ic.update(next, [{ kind: 'Telemetry', namespace: 'default', name: 'reviews-logs' }]);
  output = r.kind === 'delta' ? applyCompileDelta(output, r.delta, r.layout) : r.output;
  assertSameOutput(output, compile(next).output, 'workload Telemetry added');
  assert.ok(output.classes.some((c) => c.id === 'sidecar/default/reviews/telemetry:default/reviews-logs'));
});

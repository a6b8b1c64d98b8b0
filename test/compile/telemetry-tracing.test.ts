/**
 * Telemetry tracing (istiod's Telemetries.Tracing and configureTracingFromTelemetry): the provider's
 * tracer on every sidecar and gateway HCM, merged per mode from the root namespace's, the proxy
 * namespace's and the selecting Telemetries, with `defaultProviders.tracing` underneath. Cases of
 * istiod's TestConfigureTracing (pilot/pkg/networking/core/tracing_test.go) are facts here — the
 * zipkin, datadog, skywalking and OpenTelemetry configs, client-only and server-only specs, an
 * invalid provider — with meshsnap's documented differences (README, Telemetry tracing): the span
 * service name, the OpenTelemetry environment detector, Istio's service tags from the environment.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { meshConfigMap } from '../helpers/mesh-config-views.js';
import { compileTexts, type PipelineResult } from '../../src/pipeline.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { gatewayYaml, INGRESS_NODE, MESH_YAML } from '../helpers/gateway-sim.js';
import {
  BOOKINFO_NODES,
  compileBookinfo,
  compileHelloworldGatewayApi,
  HELLOWORLD_GATEWAY_NODE,
  indentYaml,
  served,
  type TestNode,
} from '../helpers/mesh.js';
import { assertChurnMatchesFull, bookinfoInputs } from './incremental-helpers.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- walks decoded config_dump JSON */

/** What the compile said, less the refusal of PROVIDERS' credential header (its own test below). */
const problems = (r: PipelineResult) =>
  r.diagnostics
    .filter((d) => d.severity !== 'info' && d.code !== 'secret-not-stored')
    .map(
      (d) => `${d.severity} ${d.code} ${d.kind ?? ''} ${d.namespace ?? ''}/${d.name ?? ''} ${d.field}: ${d.message}`,
    );

interface Hcm {
  where: string;
  inbound: boolean;
  tracing: any;
  requestId: any;
}

/** Every HCM a node is served, with its `tracing` and request id extension. */
function hcms(r: PipelineResult, node: TestNode): Hcm[] {
  const out: Hcm[] = [];
  for (const [name, l] of served(r, node).resources.listeners as Map<string, any>) {
    const chains = [...(l.filter_chains ?? []), ...(l.default_filter_chain ? [l.default_filter_chain] : [])];
    chains.forEach((c: any, i: number) => {
      for (const f of c.filters ?? [])
        if (f.name === 'envoy.filters.network.http_connection_manager')
          out.push({
            where: `${name}#${i}`,
            inbound: name === 'virtualInbound',
            tracing: f.typed_config.tracing,
            requestId: f.typed_config.request_id_extension,
          });
    });
  }
  // Sidecars have both sides; gateways (router nodes) outbound ones only.
  assert.ok(out.some((h) => h.inbound) || node.id.startsWith('router~'), 'an inbound HCM');
  assert.ok(
    out.some((h) => !h.inbound),
    'an outbound HCM',
  );
  return out;
}

const ZIPKIN_SERVICE = `---
apiVersion: v1
kind: Service
metadata: {name: zipkin, namespace: istio-system}
spec: {clusterIP: 10.96.50.1, ports: [{name: http-query, port: 9411}], selector: {app: zipkin}}
---
apiVersion: v1
kind: Service
metadata: {name: otel-collector, namespace: observability}
spec: {clusterIP: 10.96.50.2, ports: [{name: grpc-otlp, port: 4317}, {name: http-otlp, port: 4318}], selector: {app: otel}}
`;

const PROVIDERS = `extensionProviders:
- name: zipkin
  zipkin: {service: zipkin.istio-system.svc.cluster.local, port: 9411, maxTagLength: 256}
- name: zipkin64
  zipkin: {service: istio-system/zipkin.istio-system.svc.cluster.local, port: 9411, enable64bitTraceId: true, path: /custom/spans}
- name: datadog
  datadog: {service: zipkin.istio-system.svc.cluster.local, port: 9411, maxTagLength: 256}
- name: skywalking
  skywalking: {service: zipkin.istio-system.svc.cluster.local, port: 9411}
- name: otel-grpc
  opentelemetry:
    service: otel-collector.observability.svc.cluster.local
    port: 4317
    maxTagLength: 256
    grpc: {timeout: 3s, initialMetadata: [{name: x-scope-orgid, value: tenant-1}, {name: authorization, value: token-xxxxx}]}
- name: otel-http
  opentelemetry:
    service: otel-collector.observability.svc.cluster.local
    port: 4318
    http: {path: /v1/traces, timeout: 3s, headers: [{name: custom-header, value: custom-value}]}
    resourceDetectors: {environment: {}, dynatrace: {}}
- name: otel-dynatrace
  opentelemetry:
    service: otel-collector.observability.svc.cluster.local
    port: 4318
    http: {path: /api/v2/otlp/v1/traces, timeout: 10s, headers: [{name: x-tenant, value: abc}]}
    dynatraceSampler: {tenant: abc, clusterId: 123, rootSpansPerMinute: 2000}
- name: nowhere
  zipkin: {service: nowhere.istio-system.svc.cluster.local, port: 9411}
- name: prometheus
  prometheus: {}`;

const telemetry = (namespace: string, name: string, spec: string) => `---
apiVersion: telemetry.istio.io/v1
kind: Telemetry
metadata: {name: ${name}, namespace: ${namespace}, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
${indentYaml(spec, '  ')}
`;

/** Bookinfo with the collectors, the providers (and `mesh` more mesh config) and these objects. */
const compileWith = (mesh: string, ...objects: string[]) =>
  compileBookinfo(meshConfigMap(`${PROVIDERS}\n${mesh}`), ZIPKIN_SERVICE, ...objects);

const tracerOf = (h: Hcm) => h.tracing?.provider;

const zipkin = (endpoint = '/api/v2/spans', traceId128 = true) => ({
  name: 'envoy.tracers.zipkin',
  typed_config: {
    '@type': 'type.googleapis.com/envoy.config.trace.v3.ZipkinConfig',
    collector_cluster: 'outbound|9411||zipkin.istio-system.svc.cluster.local',
    collector_endpoint: endpoint,
    ...(traceId128 ? { trace_id_128bit: true } : {}),
    shared_span_context: false,
    collector_endpoint_version: 'HTTP_JSON',
    collector_hostname: 'zipkin.istio-system.svc.cluster.local',
  },
});

test("istiod's 'only telemetry api (with provider)': a root Telemetry's zipkin on every sidecar HCM, its sampling, the provider's tag length", () => {
  const r = compileWith(
    '',
    telemetry(
      'istio-system',
      'mesh-default',
      'tracing:\n- providers: [{name: zipkin}]\n  randomSamplingPercentage: 99.999',
    ),
  );
  assert.deepEqual(problems(r), []);
  for (const node of [BOOKINFO_NODES.productpage, BOOKINFO_NODES.reviewsV2])
    for (const h of hcms(r, node)) {
      assert.deepEqual(tracerOf(h), zipkin(), h.where);
      assert.equal(h.tracing.random_sampling.value, 99.999, h.where);
      assert.equal(h.tracing.client_sampling.value, 100);
      assert.equal(h.tracing.overall_sampling.value, 100);
      assert.equal(h.tracing.max_path_tag_length, 256, h.where);
      // Istio's tags stay (enableIstioTags defaults to true); sidecars spawn no upstream span.
      assert.ok(h.tracing.custom_tags.some((t: any) => t.tag === 'istio.namespace'));
      assert.equal(h.tracing.spawn_upstream_span, undefined, h.where);
      // Sampling by request id is Envoy's default: istiod's UUID extension says the same, meshsnap leaves it out.
      assert.equal(h.requestId, undefined, h.where);
    }
});

test("istiod's 'zipkin enable 64bit trace id', a custom path and a namespaced service", () => {
  const r = compileWith('', telemetry('istio-system', 'mesh-default', 'tracing:\n- providers: [{name: zipkin64}]'));
  assert.deepEqual(problems(r), []);
  for (const h of hcms(r, BOOKINFO_NODES.productpage)) {
    assert.deepEqual(tracerOf(h), zipkin('/custom/spans', false), h.where);
    // No randomSamplingPercentage: the mesh's defaultConfig.tracing.sampling (PILOT_TRACE_SAMPLING's 1).
    assert.equal(h.tracing.random_sampling.value, 1);
    assert.equal(h.tracing.max_path_tag_length, undefined);
  }
});

test("defaultProviders.tracing alone switches to the Telemetry path, whatever enableTracing says (istiod's 'both tracing disabled (with provider)')", () => {
  for (const mesh of [
    'defaultProviders: {tracing: [zipkin]}',
    'enableTracing: false\ndefaultProviders: {tracing: [zipkin]}',
  ]) {
    const r = compileWith(mesh);
    assert.deepEqual(problems(r), []);
    for (const h of hcms(r, BOOKINFO_NODES.productpage)) assert.deepEqual(tracerOf(h), zipkin(), h.where);
  }
});

test("istiod's 'default providers' case: a CLIENT entry disabling span reporting leaves the outbound HCMs untraced, the inbound traced", () => {
  const r = compileWith(
    'defaultProviders: {tracing: [zipkin]}',
    telemetry('istio-system', 'mesh-default', 'tracing:\n- match: {mode: CLIENT}\n  disableSpanReporting: true'),
  );
  assert.deepEqual(problems(r), []);
  const all = hcms(r, BOOKINFO_NODES.productpage);
  for (const h of all) {
    if (h.inbound) assert.deepEqual(tracerOf(h), zipkin(), h.where);
    else assert.equal(h.tracing, undefined, h.where);
  }
});

test("istiod's 'client-only config for server' and 'server-only config for skywalking server': a mode's provider is that mode's alone", () => {
  const r = compileWith(
    '',
    telemetry(
      'istio-system',
      'mesh-default',
      'tracing:\n- match: {mode: SERVER}\n  providers: [{name: skywalking}]\n  useRequestIdForTraceSampling: false',
    ),
  );
  assert.deepEqual(problems(r), []);
  for (const h of hcms(r, BOOKINFO_NODES.productpage)) {
    if (!h.inbound) {
      // No provider for CLIENT: disabled, and not the legacy tracing either.
      assert.equal(h.tracing, undefined, h.where);
      continue;
    }
    assert.deepEqual(tracerOf(h), {
      name: 'envoy.tracers.skywalking',
      typed_config: {
        '@type': 'type.googleapis.com/envoy.config.trace.v3.SkyWalkingConfig',
        grpc_service: {
          envoy_grpc: {
            cluster_name: 'outbound|9411||zipkin.istio-system.svc.cluster.local',
            authority: 'zipkin.istio-system.svc.cluster.local',
          },
        },
      },
    });
    // SkyWalking always spawns an upstream span; sampling by request id turned off.
    assert.equal(h.tracing.spawn_upstream_span, true);
    assert.deepEqual(h.requestId, {
      typed_config: {
        '@type': 'type.googleapis.com/envoy.extensions.request_id.uuid.v3.UuidRequestIdConfig',
        use_request_id_for_trace_sampling: false,
      },
    });
  }
});

test("istiod's 'basic config (with datadog provider)': collector cluster and host; the shared service name (README)", () => {
  const r = compileWith('', telemetry('istio-system', 'mesh-default', 'tracing:\n- providers: [{name: datadog}]'));
  assert.deepEqual(problems(r), []);
  for (const h of hcms(r, BOOKINFO_NODES.productpage))
    assert.deepEqual(tracerOf(h), {
      name: 'envoy.tracers.datadog',
      typed_config: {
        '@type': 'type.googleapis.com/envoy.config.trace.v3.DatadogConfig',
        collector_cluster: 'outbound|9411||zipkin.istio-system.svc.cluster.local',
        service_name: 'istio-proxy',
        collector_hostname: 'zipkin.istio-system.svc.cluster.local',
      },
    });
});

const ENVIRONMENT_DETECTOR = {
  name: 'envoy.tracers.opentelemetry.resource_detectors.environment',
  typed_config: {
    '@type':
      'type.googleapis.com/envoy.extensions.tracers.opentelemetry.resource_detectors.v3.EnvironmentResourceDetectorConfig',
  },
};

test("istiod's OpenTelemetry cases: gRPC with initial metadata, HTTP with path, timeout, headers and resource detectors", () => {
  const grpc = compileWith('', telemetry('istio-system', 'mesh-default', 'tracing:\n- providers: [{name: otel-grpc}]'));
  assert.deepEqual(problems(grpc), []);
  for (const h of hcms(grpc, BOOKINFO_NODES.productpage)) {
    assert.deepEqual(tracerOf(h), {
      name: 'envoy.tracers.opentelemetry',
      typed_config: {
        '@type': 'type.googleapis.com/envoy.config.trace.v3.OpenTelemetryConfig',
        grpc_service: {
          envoy_grpc: {
            cluster_name: 'outbound|4317||otel-collector.observability.svc.cluster.local',
            authority: 'otel-collector.observability.svc.cluster.local',
          },
          timeout: '3s',
          initial_metadata: [{ key: 'x-scope-orgid', value: 'tenant-1' }],
        },
        resource_detectors: [ENVIRONMENT_DETECTOR],
      },
    });
    assert.equal(h.tracing.max_path_tag_length, 256);
  }
  const http = compileWith('', telemetry('istio-system', 'mesh-default', 'tracing:\n- providers: [{name: otel-http}]'));
  assert.deepEqual(problems(http), []);
  for (const h of hcms(http, BOOKINFO_NODES.productpage))
    assert.deepEqual(tracerOf(h).typed_config, {
      '@type': 'type.googleapis.com/envoy.config.trace.v3.OpenTelemetryConfig',
      http_service: {
        http_uri: {
          uri: 'otel-collector.observability.svc.cluster.local/v1/traces',
          cluster: 'outbound|4318||otel-collector.observability.svc.cluster.local',
          timeout: '3s',
        },
        request_headers_to_add: [
          { header: { key: 'custom-header', value: 'custom-value' }, append_action: 'OVERWRITE_IF_EXISTS_OR_ADD' },
        ],
      },
      resource_detectors: [
        ENVIRONMENT_DETECTOR,
        {
          name: 'envoy.tracers.opentelemetry.resource_detectors.dynatrace',
          typed_config: {
            '@type':
              'type.googleapis.com/envoy.extensions.tracers.opentelemetry.resource_detectors.v3.DynatraceResourceDetectorConfig',
          },
        },
      ],
    });
});

test('a credential header of a provider is neither stored nor served: a warning naming it, the other headers kept', () => {
  const r = compileWith('', telemetry('istio-system', 'mesh-default', 'tracing:\n- providers: [{name: otel-grpc}]'));
  const refused = r.diagnostics.filter((d) => d.code === 'secret-not-stored');
  assert.deepEqual(
    refused.map((d) => `${d.severity} ${d.kind} ${d.field}`),
    ['warning ConfigMap data.mesh.extensionProviders[4].opentelemetry.grpc.initialMetadata[1].value'],
  );
  const served = JSON.stringify(hcms(r, BOOKINFO_NODES.productpage).map(tracerOf));
  assert.ok(served.includes('tenant-1') && !served.includes('token-xxxxx'));
  const stored = [...r.stored.objects.values()].map((b) => Buffer.from(b).toString('utf8')).join('\n');
  assert.ok(stored.includes('tenant-1') && !stored.includes('token-xxxxx'));
});

test("istiod's Dynatrace sampler re-uses the OTLP HTTP exporter's host and headers, and samples 100 % so the sampler decides", () => {
  const r = compileWith(
    '',
    telemetry(
      'istio-system',
      'mesh-default',
      'tracing:\n- providers: [{name: otel-dynatrace}]\n  randomSamplingPercentage: 5',
    ),
  );
  assert.deepEqual(problems(r), []);
  for (const h of hcms(r, BOOKINFO_NODES.productpage)) {
    assert.equal(h.tracing.random_sampling.value, 100, h.where);
    assert.deepEqual(tracerOf(h).typed_config.sampler, {
      name: 'envoy.tracers.opentelemetry.samplers.dynatrace',
      typed_config: {
        '@type': 'type.googleapis.com/envoy.extensions.tracers.opentelemetry.samplers.v3.DynatraceSamplerConfig',
        tenant: 'abc',
        cluster_id: 123,
        root_spans_per_minute: 2000,
        http_service: {
          http_uri: {
            uri: 'otel-collector.observability.svc.cluster.local/api/v2/samplingConfiguration',
            cluster: 'outbound|4318||otel-collector.observability.svc.cluster.local',
            timeout: '10s',
          },
          request_headers_to_add: [
            { header: { key: 'x-tenant', value: 'abc' }, append_action: 'OVERWRITE_IF_EXISTS_OR_ADD' },
          ],
        },
      },
    });
  }
});

test("istiod's 'invalid provider': a provider without a tracer, one not in the mesh config, one whose service is unknown: no tracing, a warning naming the field", () => {
  for (const [name, code] of [
    ['prometheus', 'unsupported-provider'],
    ['missing', 'unknown-provider'],
    ['nowhere', 'unsupported-provider'],
  ] as const) {
    const r = compileWith('', telemetry('istio-system', 'mesh-default', `tracing:\n- providers: [{name: ${name}}]`));
    const said = problems(r);
    assert.equal(said.length, 1, said.join('\n'));
    assert.ok(
      said[0]?.startsWith(`warning ${code} Telemetry istio-system/mesh-default spec.tracing[0].providers[0]:`),
      said[0],
    );
    for (const h of hcms(r, BOOKINFO_NODES.productpage)) assert.equal(h.tracing, undefined, `${name} ${h.where}`);
  }
});

test('levels: a namespace Telemetry overrides the root one for its proxies; a selecting one overrides both for the workloads it selects', () => {
  const r = compileWith(
    '',
    telemetry(
      'istio-system',
      'mesh-default',
      'tracing:\n- providers: [{name: zipkin}]\n  randomSamplingPercentage: 10',
    ),
    telemetry(
      'default',
      'ns',
      'tracing:\n- randomSamplingPercentage: 20\n  customTags: {team: {literal: {value: bookinfo}}}',
    ),
    telemetry('default', 'reviews', 'selector: {matchLabels: {app: reviews}}\ntracing:\n- disableSpanReporting: true'),
  );
  assert.deepEqual(problems(r), []);
  for (const h of hcms(r, BOOKINFO_NODES.productpage)) {
    assert.deepEqual(tracerOf(h), zipkin(), h.where);
    assert.equal(h.tracing.random_sampling.value, 20, h.where);
    assert.ok(
      h.tracing.custom_tags.some((t: any) => t.tag === 'team' && t.literal.value === 'bookinfo'),
      h.where,
    );
  }
  for (const h of hcms(r, BOOKINFO_NODES.reviewsV2)) assert.equal(h.tracing, undefined, h.where);
});

test("a Telemetry's customTags replace the ProxyConfig's; enableIstioTags: false drops Istio's", () => {
  const r = compileWith(
    'defaultConfig:\n  tracing:\n    customTags: {from-mesh: {literal: {value: m}}}',
    telemetry(
      'istio-system',
      'mesh-default',
      'tracing:\n- providers: [{name: zipkin}]\n  enableIstioTags: false\n  customTags:\n    z-env: {environment: {name: POD_NAME, defaultValue: none}}\n    a-header: {header: {name: x-team}}',
    ),
  );
  assert.deepEqual(problems(r), []);
  for (const h of hcms(r, BOOKINFO_NODES.productpage))
    assert.deepEqual(h.tracing.custom_tags, [
      { tag: 'a-header', request_header: { name: 'x-team' } },
      { tag: 'z-env', environment: { name: 'POD_NAME', default_value: 'none' } },
    ]);
  const meshTags = compileWith(
    'defaultConfig:\n  tracing:\n    customTags: {from-mesh: {literal: {value: m}}}',
    telemetry('istio-system', 'mesh-default', 'tracing:\n- providers: [{name: zipkin}]\n  enableIstioTags: false'),
  );
  for (const h of hcms(meshTags, BOOKINFO_NODES.productpage))
    assert.deepEqual(h.tracing.custom_tags, [{ tag: 'from-mesh', literal: { value: 'm' } }]);
});

test('a Sidecar that hides the collector: its proxies do not trace (Envoy would reject a tracer naming a cluster it lacks), a warning naming the Sidecar', () => {
  const sidecar = `---
apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: default, namespace: default}
spec: {egress: [{hosts: ["./*"]}]}
`;
  const r = compileWith(
    '',
    telemetry('istio-system', 'mesh-default', 'tracing:\n- providers: [{name: zipkin}]'),
    sidecar,
  );
  const said = problems(r);
  assert.equal(said.length, 1, said.join('\n'));
  assert.ok(said[0]?.startsWith('warning tracing-not-applied Sidecar default/default spec.egress:'), said[0]);
  assert.match(said[0] as string, /zipkin\.istio-system\.svc\.cluster\.local:9411/);
  for (const h of hcms(r, BOOKINFO_NODES.productpage)) assert.equal(h.tracing, undefined, h.where);
  // Seen again once the Sidecar lets it in.
  const open = compileWith(
    '',
    telemetry('istio-system', 'mesh-default', 'tracing:\n- providers: [{name: zipkin}]'),
    sidecar.replace('["./*"]', '["./*", "istio-system/*"]'),
  );
  assert.deepEqual(problems(open), []);
  for (const h of hcms(open, BOOKINFO_NODES.productpage)) assert.deepEqual(tracerOf(h), zipkin(), h.where);
});

test("gateways spawn an upstream span (istiod's proxy.Type == Router) and take the CLIENT spec", () => {
  const server = `port: { number: 8080, name: http, protocol: HTTP }\nhosts: ["*"]`;
  const r = compileTexts(
    [
      {
        file: 'gw.yaml',
        text:
          MESH_YAML +
          gatewayYaml('gw', 'default', server) +
          ZIPKIN_SERVICE +
          meshConfigMap(PROVIDERS) +
          telemetry('istio-system', 'mesh-default', 'tracing:\n- match: {mode: CLIENT}\n  providers: [{name: zipkin}]'),
      },
    ],
    { hasher: nodeSha256Hex },
  );
  assert.deepEqual(problems(r), []);
  const gateway = hcms(r, INGRESS_NODE);
  assert.ok(gateway.length > 0);
  for (const h of gateway) {
    assert.deepEqual(tracerOf(h), zipkin(), h.where);
    assert.equal(h.tracing.spawn_upstream_span, true, h.where);
  }
});

test('without Telemetry tracing or default tracing providers the HCMs keep the legacy tracing, also with other Telemetries', () => {
  const plain = compileBookinfo(meshConfigMap(PROVIDERS), ZIPKIN_SERVICE);
  const logged = compileBookinfo(
    meshConfigMap(PROVIDERS),
    ZIPKIN_SERVICE,
    telemetry('istio-system', 'mesh-default', 'accessLogging:\n- providers: [{name: envoy}]'),
  );
  assert.deepEqual(problems(plain), []);
  for (const h of hcms(plain, BOOKINFO_NODES.productpage)) {
    assert.equal(tracerOf(h), undefined, h.where);
    assert.equal(h.tracing.random_sampling.value, 1, h.where);
  }
  // One tracing everywhere: the same as a mesh without the providers' services and config.
  const [legacy] = hcms(compileBookinfo(), BOOKINFO_NODES.productpage).map((h) => h.tracing);
  assert.ok(legacy);
  for (const r of [plain, logged])
    for (const h of hcms(r, BOOKINFO_NODES.productpage)) assert.deepEqual(h.tracing, legacy, h.where);
});

test('incremental: endpoint churn under Telemetry tracing (a namespace and a workload Telemetry) stays a delta equal to a full compile', () => {
  const start = bookinfoInputs([
    ['mesh.yaml', meshConfigMap(PROVIDERS)],
    ['collectors.yaml', ZIPKIN_SERVICE],
    [
      'tel.yaml',
      telemetry('istio-system', 'mesh-default', 'tracing:\n- providers: [{name: zipkin}]') +
        telemetry('default', 'ns', 'tracing:\n- randomSamplingPercentage: 20') +
        telemetry(
          'default',
          'reviews',
          'selector: {matchLabels: {app: reviews}}\ntracing:\n- providers: [{name: otel-grpc}]',
        ),
    ],
  ]);
  assertChurnMatchesFull(start, 5, 30, (output) => {
    const keys = output.classes.map((c) => c.id).filter((id) => id.includes('telemetry:default/reviews'));
    assert.ok(keys.length > 0, output.classes.map((c) => c.id).join(' '));
  });
});

test("a Telemetry's targetRef to a Gateway API Gateway traces that gateway's pods (a class of their own), not the sidecars of its namespace", () => {
  const r = compileHelloworldGatewayApi(
    meshConfigMap(PROVIDERS) +
      ZIPKIN_SERVICE +
      telemetry(
        'default',
        'gw-tracing',
        'targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: helloworld-gateway}]\ntracing:\n- providers: [{name: zipkin}]',
      ),
  );
  // The sample's gateway file repeats the route file's HTTPRoute (a duplicate the helper's other users see too).
  assert.deepEqual(
    problems(r).filter((p) => !p.includes('duplicate-object HTTPRoute default/helloworld')),
    [],
  );
  assert.match(served(r, HELLOWORLD_GATEWAY_NODE).classId, /telemetry:default\/gw-tracing$/);
  const gateway = hcms(r, HELLOWORLD_GATEWAY_NODE);
  assert.ok(gateway.length > 0);
  for (const h of gateway) {
    assert.deepEqual(tracerOf(h), zipkin(), h.where);
    assert.equal(h.tracing.spawn_upstream_span, true, h.where);
  }
  // The namespace's sidecars keep the legacy tracing (no tracer of their own).
  for (const h of hcms(r, BOOKINFO_NODES.productpage)) assert.equal(tracerOf(h), undefined, h.where);
});

/**
 * The HCMs' tracing, as istiod writes it without a Telemetry (configureTracingFromTelemetry's
 * legacy path): on by default (MeshConfig `enableTracing`), `defaultConfig.tracing` sampling,
 * custom tags, path tag length and Istio's tags; a gateway pod's own `proxy.istio.io/config`.
 * istiod's TestConfigureTracing "no telemetry api" case is a fact here, with meshsnap's documented
 * difference: Istio's service tags read from the proxy's environment, the canonical ones left out.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { meshConfigMap } from '../helpers/mesh-config-views.js';
import { compileTexts, type PipelineResult } from '../../src/pipeline.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { compileGateway, gatewayYaml, INGRESS_NODE, MESH_YAML } from '../helpers/gateway-sim.js';
import { BOOKINFO_NODES, compileBookinfo, served, type TestNode } from '../helpers/mesh.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- walks decoded config_dump JSON */

const configMap = meshConfigMap;

const bookinfo = compileBookinfo;
const problems = (r: PipelineResult) =>
  r.diagnostics.filter((d) => d.severity !== 'info').map((d) => `${d.severity} ${d.code} ${d.field}: ${d.message}`);

/** Every HCM a node is served (listener name, chain index), with its `tracing`. */
function hcms(r: PipelineResult, node: TestNode): { where: string; tracing: any }[] {
  const out: { where: string; tracing: any }[] = [];
  for (const [name, l] of served(r, node).resources.listeners as Map<string, any>) {
    const chains = [...(l.filter_chains ?? []), ...(l.default_filter_chain ? [l.default_filter_chain] : [])];
    chains.forEach((c: any, i: number) => {
      for (const f of c.filters ?? [])
        if (f.name === 'envoy.filters.network.http_connection_manager')
          out.push({ where: `${name}#${i}`, tracing: f.typed_config.tracing });
    });
    const api = l.api_listener?.api_listener;
    if (api) out.push({ where: `${name} (api)`, tracing: api.tracing });
  }
  return out;
}

const dryRun = (tag: string, key: string) => ({
  tag,
  metadata: { kind: { request: {} }, metadata_key: { key: 'envoy.filters.http.rbac', path: [{ key }] } },
});
/** istiod's optionalPolicyTags, and its service tags as meshsnap writes them (from the environment). */
const ISTIO_TAGS = [
  dryRun('istio.authorization.dry_run.allow_policy.name', 'istio_dry_run_allow_shadow_effective_policy_id'),
  dryRun('istio.authorization.dry_run.allow_policy.result', 'istio_dry_run_allow_shadow_engine_result'),
  dryRun('istio.authorization.dry_run.deny_policy.name', 'istio_dry_run_deny_shadow_effective_policy_id'),
  dryRun('istio.authorization.dry_run.deny_policy.result', 'istio_dry_run_deny_shadow_engine_result'),
  { tag: 'istio.cluster_id', environment: { name: 'ISTIO_META_CLUSTER_ID', default_value: 'unknown' } },
  { tag: 'istio.mesh_id', environment: { name: 'ISTIO_META_MESH_ID', default_value: 'unknown' } },
  { tag: 'istio.namespace', environment: { name: 'POD_NAMESPACE', default_value: 'default' } },
];
const tracing = (sampling: number, tags: unknown[], maxLen?: number) => ({
  client_sampling: { value: 100 },
  random_sampling: { value: sampling },
  overall_sampling: { value: 100 },
  custom_tags: tags,
  ...(maxLen ? { max_path_tag_length: maxLen } : {}),
});

test("by default (enableTracing is on in istiod's mesh defaults) every sidecar HCM, inbound and outbound, samples 1 % with Istio's tags", () => {
  const r = bookinfo();
  const all = hcms(r, BOOKINFO_NODES.productpage);
  assert.ok(all.some((h) => h.where.startsWith('virtualInbound')) && all.some((h) => h.where.startsWith('0.0.0.0_')));
  for (const h of all) assert.deepEqual(h.tracing, tracing(1, ISTIO_TAGS), h.where);
});

test("istiod's 'no telemetry api' case: sampling 55.55, maxPathTagLength 13, an environment tag, sorted in among Istio's", () => {
  const r = bookinfo(
    configMap(`defaultConfig:
  tracing:
    sampling: 55.55
    maxPathTagLength: 13
    customTags:
      test: { environment: { name: FOO } }
      a-literal: { literal: { value: v1 } }
      z-header: { header: { name: x-team, defaultValue: none } }`),
  );
  assert.deepEqual(problems(r), []);
  const want = tracing(
    55.55,
    [
      { tag: 'a-literal', literal: { value: 'v1' } },
      ...ISTIO_TAGS,
      { tag: 'test', environment: { name: 'FOO' } },
      { tag: 'z-header', request_header: { name: 'x-team', default_value: 'none' } },
    ],
    13,
  );
  for (const h of hcms(r, BOOKINFO_NODES.reviewsV2)) assert.deepEqual(h.tracing, want, h.where);
});

test('enableTracing: false leaves tracing out; enableIstioTags: false keeps only the custom tags', () => {
  for (const h of hcms(bookinfo(configMap('enableTracing: false')), BOOKINFO_NODES.productpage))
    assert.equal(h.tracing, undefined, h.where);
  const r = bookinfo(
    configMap(
      `defaultConfig:\n  tracing:\n    enableIstioTags: false\n    customTags: { team: { literal: { value: a } } }`,
    ),
  );
  for (const h of hcms(r, BOOKINFO_NODES.productpage))
    assert.deepEqual(h.tracing, tracing(1, [{ tag: 'team', literal: { value: 'a' } }]), h.where);
});

test('sampling over 100 is 1 as in istiod (a warning); a negative one, an empty custom tag are errors naming the field', () => {
  const over = bookinfo(configMap('defaultConfig:\n  tracing: { sampling: 150 }'));
  assert.ok(problems(over).some((p) => p.includes('defaultConfig.tracing.sampling') && p.startsWith('warning')));
  for (const h of hcms(over, BOOKINFO_NODES.productpage)) assert.equal(h.tracing.random_sampling.value, 1, h.where);
  const bad = bookinfo(configMap('defaultConfig:\n  tracing: { sampling: -1, customTags: { empty: {} } }'));
  const said = problems(bad);
  assert.ok(
    said.some((p) => p.startsWith('error') && p.includes('defaultConfig.tracing.sampling')),
    said.join('\n'),
  );
  assert.ok(
    said.some((p) => p.startsWith('error') && p.includes('defaultConfig.tracing.customTags["empty"]')),
    said.join('\n'),
  );
  // Envoy would refuse a negative percentage: none is served.
  for (const h of hcms(bad, BOOKINFO_NODES.productpage)) assert.ok(h.tracing.random_sampling.value >= 0, h.where);
});

test("a gateway pod's proxy.istio.io/config tracing applies to its HCMs; the tracer fields are the bootstrap's (info)", () => {
  const server = `port: { number: 8080, name: http, protocol: HTTP }\nhosts: ["*"]`;
  const annotated = (yaml: string) =>
    yaml.replace(
      'labels: {app: istio-ingressgateway, istio: ingressgateway}}',
      `labels: {app: istio-ingressgateway, istio: ingressgateway}, annotations: {"proxy.istio.io/config": "tracing: {sampling: 100, zipkin: {address: 'zipkin.istio-system:9411'}}"}}`,
    );
  const r = compileTexts([{ file: 'gw.yaml', text: annotated(MESH_YAML) + gatewayYaml('gw', 'default', server) }], {
    hasher: nodeSha256Hex,
  });
  assert.notEqual(annotated(MESH_YAML), MESH_YAML);
  const plain = compileGateway(gatewayYaml('gw', 'default', server));
  const gateway = hcms(r, INGRESS_NODE);
  assert.ok(gateway.length > 0);
  for (const h of gateway) assert.deepEqual(h.tracing, tracing(100, ISTIO_TAGS), h.where);
  for (const h of hcms(plain, INGRESS_NODE)) assert.deepEqual(h.tracing, tracing(1, ISTIO_TAGS), h.where);
  assert.ok(
    r.diagnostics.some((d) => d.severity === 'info' && d.field?.endsWith('tracing.zipkin')),
    r.diagnostics.map((d) => d.field).join('\n'),
  );
});

test('proxyless gRPC clients get no tracing (istiod builds their HCMs without it)', () => {
  for (const h of hcms(bookinfo(), BOOKINFO_NODES.grpcClient)) assert.equal(h.tracing, undefined, h.where);
});

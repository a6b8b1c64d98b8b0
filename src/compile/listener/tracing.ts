/**
 * The HCMs' `tracing`, as istiod writes it without a Telemetry (configureTracingFromTelemetry's
 * legacy path, pilot/pkg/networking/core/tracing.go): with the mesh's `enableTracing` (on by
 * default) every sidecar and gateway HCM samples `defaultConfig.tracing.sampling` percent of requests
 * (PILOT_TRACE_SAMPLING's 1 by default), client and overall sampling 100, and tags its spans with
 * Istio's tags (unless `enableIstioTags: false`) and the configured custom tags, sorted by tag. The
 * tracer is the proxy bootstrap's.
 *
 * Istio's service tags are per proxy in istiod (literals from its node metadata). meshsnap shares
 * one HCM between proxies, so it reads the same values at run time from the proxy's environment,
 * where the injector put them: `istio.namespace` from POD_NAMESPACE, `istio.mesh_id` from
 * ISTIO_META_MESH_ID, `istio.cluster_id` from ISTIO_META_CLUSTER_ID, with istiod's defaults.
 * `istio.canonical_service` and `istio.canonical_revision` come from pod labels no environment
 * variable holds: meshsnap leaves them out (README).
 */
import type { MeshConfig, ProxyTracing, TracingCustomTag } from '../../model/mesh-config.js';
import type { envoy } from '../../xds/proto.js';
import { deepFreeze } from '../intern.js';

export type HcmTracing =
  envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager.Tracing.$Properties;
export type CustomTag = envoy.type.tracing.v3.CustomTag.$Properties;

/** PILOT_TRACE_SAMPLING's default. */
const DEFAULT_SAMPLING = 1;

const environmentTag = (tag: string, name: string, defaultValue: string): CustomTag => ({
  tag,
  environment: { name, default_value: defaultValue },
});

/** istiod's optionalPolicyTags: the RBAC shadow rules' results, from the request's dynamic metadata. */
const dryRunTag = (tag: string, key: string): CustomTag => ({
  tag,
  metadata: {
    kind: { request: {} },
    metadata_key: { key: 'envoy.filters.http.rbac', path: [{ key }] },
  },
});

/** istiod's buildServiceTags (those the environment holds) and optionalPolicyTags. */
const ISTIO_TAGS: readonly CustomTag[] = [
  environmentTag('istio.cluster_id', 'ISTIO_META_CLUSTER_ID', 'unknown'),
  environmentTag('istio.mesh_id', 'ISTIO_META_MESH_ID', 'unknown'),
  environmentTag('istio.namespace', 'POD_NAMESPACE', 'default'),
  dryRunTag('istio.authorization.dry_run.allow_policy.name', 'istio_dry_run_allow_shadow_effective_policy_id'),
  dryRunTag('istio.authorization.dry_run.allow_policy.result', 'istio_dry_run_allow_shadow_engine_result'),
  dryRunTag('istio.authorization.dry_run.deny_policy.name', 'istio_dry_run_deny_shadow_effective_policy_id'),
  dryRunTag('istio.authorization.dry_run.deny_policy.result', 'istio_dry_run_deny_shadow_engine_result'),
];

/** istiod's buildCustomTagsFromProxyConfig. */
function customTag(t: TracingCustomTag): CustomTag {
  if ('literal' in t) return { tag: t.tag, literal: { value: t.literal } };
  const source = 'environment' in t ? t.environment : t.header;
  const spec = { name: source.name, ...(source.defaultValue ? { default_value: source.defaultValue } : {}) };
  return 'environment' in t ? { tag: t.tag, environment: spec } : { tag: t.tag, request_header: spec };
}

const built = new WeakMap<ProxyTracing, HcmTracing>();
const NO_SETTINGS: ProxyTracing = Object.freeze({});

/** The `tracing` of every HCM of a mesh (or a gateway's merged ProxyConfig): frozen, shared; undefined with tracing off. */
export function hcmTracing(mesh: MeshConfig): HcmTracing | undefined {
  if (mesh.tracingDisabled) return undefined;
  const settings = mesh.tracing ?? NO_SETTINGS;
  let out = built.get(settings);
  if (!out) built.set(settings, (out = buildTracing(settings)));
  return out;
}

/** Istio's tags (those meshsnap writes; see the header). */
export const istioTags = (): readonly CustomTag[] => ISTIO_TAGS;

/** The ProxyConfig's own custom tags (istiod's buildCustomTagsFromProxyConfig). */
export const proxyConfigTags = (t: ProxyTracing | undefined): CustomTag[] => (t?.customTags ?? []).map(customTag);

/** Sorted by tag name, as istiod's sort.Slice (the tags are distinct). */
export const sortTags = (tags: CustomTag[]): CustomTag[] =>
  tags.sort((a, b) => ((a.tag ?? '') < (b.tag ?? '') ? -1 : (a.tag ?? '') > (b.tag ?? '') ? 1 : 0));

/** istiod's proxyConfigSamplingValue: the ProxyConfig's sampling when set, else PILOT_TRACE_SAMPLING's. */
export const proxyConfigSampling = (t: ProxyTracing | undefined): number => t?.sampling || DEFAULT_SAMPLING;

function buildTracing(t: ProxyTracing): HcmTracing {
  const tags = sortTags([...(t.enableIstioTags === false ? [] : ISTIO_TAGS), ...proxyConfigTags(t)]);
  return deepFreeze({
    client_sampling: { value: 100 },
    random_sampling: { value: proxyConfigSampling(t) },
    overall_sampling: { value: 100 },
    custom_tags: tags,
    ...(t.maxPathTagLength ? { max_path_tag_length: { value: t.maxPathTagLength } } : {}),
  });
}

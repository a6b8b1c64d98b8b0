/**
 * The HCMs' `tracing` as istiod's Telemetry path gives it (pilot/pkg/model/telemetry.go Tracing,
 * pilot/pkg/networking/core/tracing.go configureTracingFromTelemetry): when a Telemetry in scope has
 * `tracing` entries or the mesh names `defaultProviders.tracing`, the Telemetry path replaces the
 * legacy one (./tracing.ts: `enableTracing`, the bootstrap's tracer) for every HCM of sidecars and
 * gateways.
 *
 * - The spec per mode (CLIENT: sidecar outbound and gateway listeners, SERVER: sidecar inbound)
 *   starts with the first default provider, Istio's tags and the request id used for sampling; each
 *   `tracing` entry of the applicable Telemetries (root namespace, own namespace, selecting ones,
 *   ./telemetry-logs.ts `applicable`) that matches the mode overrides what it sets (its first
 *   provider, `disableSpanReporting`, `customTags` as a whole, `randomSamplingPercentage`,
 *   `useRequestIdForTraceSampling`, `enableIstioTags`). No provider left, or span reporting
 *   disabled: the HCM does not trace.
 * - The provider's tracer (zipkin, datadog, skywalking, opentelemetry) sends to
 *   `outbound|<port>||<host>` of its service (istiod's LookupCluster). A provider whose service is
 *   unknown, or of a kind without a tracer: the HCM does not trace (istiod logs and does the same).
 * - Sampling: 100 with an OpenTelemetry sampler, else `randomSamplingPercentage`, else the mesh's
 *   `defaultConfig.tracing.sampling` (PILOT_TRACE_SAMPLING's 1). Tags as the legacy path, the
 *   Telemetry's `customTags` replacing the ProxyConfig's when it has some. Gateways (and SkyWalking)
 *   spawn an upstream span.
 *
 * Where meshsnap differs, because one HCM serves many proxies (README, Telemetry tracing): the
 * span service name istiod takes from each proxy's node (`<app>.<namespace>`) is not written —
 * OpenTelemetry leaves `service_name` out and always has the environment resource detector (so
 * `OTEL_RESOURCE_ATTRIBUTES=service.name=…` in the proxy's environment names it), Datadog names
 * `istio-proxy` (its tracer's `DD_SERVICE` overrides it); Zipkin and SkyWalking name the node's
 * cluster themselves, as with istiod. And a proxy whose CDS lacks the collector's cluster (a
 * Sidecar or exportTo hides it) does not trace: Envoy would reject its listeners.
 */
import { objectAt, type Diagnostics } from '../../model/diagnostics.js';
import type {
  ExtensionProvider,
  OtelHttpService,
  ProviderHeader,
  TracingCollector,
} from '../../model/extension-provider.js';
import type { MeshConfig } from '../../model/mesh-config.js';
import type { MeshService, ServiceModel } from '../../model/service-model.js';
import type { Telemetry, TelemetryCustomTag, TelemetryLogMode } from '../../model/telemetry.js';
import type { ProxyTracing } from '../../model/proxy-config.js';
import { durationMs, envoy, packAny, type Any } from '../../xds/proto.js';
import { deepFreeze } from '../intern.js';
import { outboundClusterName } from '../names.js';
import { providerService } from '../provider-service.js';
import { istioTags, sortTags, proxyConfigSampling, proxyConfigTags, type HcmTracing } from './tracing.js';
import type { HcmTracingFields, RequestIdExtension } from './proxy-headers.js';

type CustomTag = envoy.type.tracing.v3.CustomTag.$Properties;
type HeaderValueOption = envoy.config.core.v3.HeaderValueOption.$Properties;
type TypedExtensionConfig = envoy.config.core.v3.TypedExtensionConfig.$Properties;

/** istiod's TracingSpec of one mode, after the merge. */
export interface TracingSpec {
  readonly provider?: ExtensionProvider;
  readonly disabled: boolean;
  readonly randomSamplingPercentage?: number;
  readonly customTags?: Readonly<Record<string, TelemetryCustomTag>>;
  readonly useRequestIdForTraceSampling: boolean;
  readonly enableIstioTags: boolean;
}

/**
 * What the Telemetry path puts on an HCM: `tracing` absent, the HCM does not trace; `requestId`
 * absent, Envoy's default (the UUID extension, sampling by request id), as istiod's default one.
 */
export interface HcmTracingChoice extends HcmTracingFields {
  /** The clusters the tracer sends to: each must be in the proxy's CDS. */
  readonly clusters: readonly { readonly hostname: string; readonly port: number }[];
  /** The tracing provider's name, when it traces. */
  readonly provider?: string;
}

/** istiod's Telemetries.Tracing: the spec of `mode` from these Telemetries; undefined: the legacy path. */
export function mergeTracing(
  telemetries: readonly Telemetry[],
  defaults: readonly string[],
  mode: TelemetryLogMode,
  fetch: (name: string) => ExtensionProvider | undefined,
): TracingSpec | undefined {
  const entries = telemetries.flatMap((t) => t.tracing ?? []);
  if (entries.length === 0 && defaults.length === 0) return undefined;
  const spec: { -readonly [K in keyof TracingSpec]: TracingSpec[K] } = {
    disabled: false,
    useRequestIdForTraceSampling: true,
    enableIstioTags: true,
  };
  if (defaults.length > 0) spec.provider = fetch(defaults[0] as string);
  for (const e of entries) {
    if (e.mode !== undefined && e.mode !== mode) continue;
    // The first provider named; one not found unsets it (istiod's fetchProvider gives nil).
    if (e.providers?.length) spec.provider = fetch(e.providers[0] as string);
    if (e.disableSpanReporting !== undefined) spec.disabled = e.disableSpanReporting;
    if (e.customTags !== undefined) spec.customTags = e.customTags;
    if (e.randomSamplingPercentage !== undefined) spec.randomSamplingPercentage = e.randomSamplingPercentage;
    if (e.useRequestIdForTraceSampling !== undefined)
      spec.useRequestIdForTraceSampling = e.useRequestIdForTraceSampling;
    if (e.enableIstioTags !== undefined) spec.enableIstioTags = e.enableIstioTags;
  }
  if (!spec.provider) spec.disabled = true;
  return spec;
}

/** Resolves `[<ns>/]<host>` to the service istiod's LookupCluster finds; undefined: none. */
export type CollectorLookup = (service: string) => MeshService | undefined;

/** istiod's LookupCluster over the mesh's services (../provider-service.ts). */
export const collectorLookup =
  (model: ServiceModel): CollectorLookup =>
  (service) =>
    providerService(model, service);

/** A tracer's typed config, or why istiod configures none. */
type BuiltTracer =
  | {
      readonly name: string;
      readonly config: Any;
      readonly maxTagLength?: number;
      readonly spawnUpstreamSpan?: true;
      readonly customSampler?: true;
      readonly clusters: readonly { readonly hostname: string; readonly port: number }[];
    }
  | { readonly error: string };

const ZIPKIN_CONFIG = 'envoy.config.trace.v3.ZipkinConfig';
const DATADOG_CONFIG = 'envoy.config.trace.v3.DatadogConfig';
const SKYWALKING_CONFIG = 'envoy.config.trace.v3.SkyWalkingConfig';
const OTEL_CONFIG = 'envoy.config.trace.v3.OpenTelemetryConfig';
const UUID_CONFIG = 'envoy.extensions.request_id.uuid.v3.UuidRequestIdConfig';
const ENVIRONMENT_DETECTOR =
  'envoy.extensions.tracers.opentelemetry.resource_detectors.v3.EnvironmentResourceDetectorConfig';
const DYNATRACE_DETECTOR =
  'envoy.extensions.tracers.opentelemetry.resource_detectors.v3.DynatraceResourceDetectorConfig';
const DYNATRACE_SAMPLER = 'envoy.extensions.tracers.opentelemetry.samplers.v3.DynatraceSamplerConfig';

/** The span service name meshsnap gives Datadog (istiod: the proxy node's cluster; see the header). */
export const SHARED_SERVICE_NAME = 'istio-proxy';

/** An HttpUri's timeout is required by Envoy; istiod's default for Zipkin's HttpService. */
const DEFAULT_HTTP_TIMEOUT_MS = 5000;

/** Go's url.JoinPath(host, path) for a scheme-less host: the path cleaned, a trailing slash kept. */
export function joinPath(host: string, path: string | undefined): string {
  const parts = `/${host}/${path ?? ''}`.split('/');
  const out: string[] = [];
  for (const p of parts) {
    if (p === '' || p === '.') continue;
    if (p === '..') out.pop();
    else out.push(p);
  }
  const joined = out.join('/');
  return path?.endsWith('/') && !joined.endsWith('/') ? `${joined}/` : joined;
}

const headersToAdd = (headers: readonly ProviderHeader[] | undefined): HeaderValueOption[] =>
  (headers ?? []).map((h) => ({
    append_action: envoy.config.core.v3.HeaderValueOption.HeaderAppendAction.OVERWRITE_IF_EXISTS_OR_ADD,
    header: { key: h.name, value: h.value },
  }));

const httpService = (cluster: string, uri: string, http: OtelHttpService | undefined) => ({
  http_uri: { uri, cluster, timeout: durationMs(http?.timeoutMs ?? DEFAULT_HTTP_TIMEOUT_MS) },
  ...(http?.headers?.length ? { request_headers_to_add: headersToAdd(http.headers) } : {}),
});

const typed = (name: string, typeName: string, message: object): TypedExtensionConfig => ({
  name,
  typed_config: packAny(typeName, message),
});

/** istiod's configureFromProviderConfig: the tracer a provider gives. */
function buildTracer(p: ExtensionProvider, lookup: CollectorLookup): BuiltTracer {
  const resolve = (c: TracingCollector) => {
    const svc = lookup(c.service);
    return svc
      ? { hostname: svc.hostname, port: c.port, cluster: outboundClusterName(c.port, '', svc.hostname) }
      : undefined;
  };
  const notFound = (c: TracingCollector) => ({
    error: `could not find service ${c.service} in the mesh (its tracing provider "${p.name}")`,
  });
  if (p.zipkin) {
    const z = p.zipkin;
    const at = resolve(z);
    if (!at) return notFound(z);
    return {
      name: 'envoy.tracers.zipkin',
      config: packAny(ZIPKIN_CONFIG, {
        collector_cluster: at.cluster,
        collector_endpoint: z.path || '/api/v2/spans',
        trace_id_128bit: !z.enable64bitTraceId,
        shared_span_context: { value: false },
        collector_endpoint_version: envoy.config.trace.v3.ZipkinConfig.CollectorEndpointVersion.HTTP_JSON,
        collector_hostname: at.hostname,
      }),
      ...(z.maxTagLength ? { maxTagLength: z.maxTagLength } : {}),
      clusters: [at],
    };
  }
  if (p.datadog) {
    const at = resolve(p.datadog);
    if (!at) return notFound(p.datadog);
    return {
      name: 'envoy.tracers.datadog',
      config: packAny(DATADOG_CONFIG, {
        collector_cluster: at.cluster,
        service_name: SHARED_SERVICE_NAME,
        collector_hostname: at.hostname,
      }),
      ...(p.datadog.maxTagLength ? { maxTagLength: p.datadog.maxTagLength } : {}),
      clusters: [at],
    };
  }
  if (p.skywalking) {
    const at = resolve(p.skywalking);
    if (!at) return notFound(p.skywalking);
    return {
      name: 'envoy.tracers.skywalking',
      config: packAny(SKYWALKING_CONFIG, {
        grpc_service: { envoy_grpc: { cluster_name: at.cluster, authority: at.hostname } },
      }),
      spawnUpstreamSpan: true,
      clusters: [at],
    };
  }
  if (p.opentelemetry) return buildOtel(p, p.opentelemetry, resolve, notFound);
  if (p.unbuiltTracing)
    return {
      error: `tracing provider "${p.name}" (${p.unbuiltTracing}) is deprecated: istiod configures no tracer for it`,
    };
  return { error: `provider "${p.name}" does not support tracing` };
}

/** istiod's otelConfig (with the header's service name choice). */
function buildOtel(
  p: ExtensionProvider,
  o: NonNullable<ExtensionProvider['opentelemetry']>,
  resolve: (c: TracingCollector) => { hostname: string; port: number; cluster: string } | undefined,
  notFound: (c: TracingCollector) => { error: string },
): BuiltTracer {
  const at = resolve(o);
  if (!at) return notFound(o);
  const clusters = [at];
  const detectors: TypedExtensionConfig[] = [
    typed('envoy.tracers.opentelemetry.resource_detectors.environment', ENVIRONMENT_DETECTOR, {}),
  ];
  if (o.resourceDetectors?.dynatrace)
    detectors.push(typed('envoy.tracers.opentelemetry.resource_detectors.dynatrace', DYNATRACE_DETECTOR, {}));
  let sampler: TypedExtensionConfig | undefined;
  const dt = o.dynatraceSampler;
  if (dt) {
    let service;
    if (dt.httpService) {
      const api = resolve(dt.httpService);
      if (!api)
        return {
          error: `could not find service ${dt.httpService.service} in the mesh (the Dynatrace sampler of "${p.name}")`,
        };
      clusters.push(api);
      service = httpService(api.cluster, joinPath(api.hostname, dt.httpService.http?.path), dt.httpService.http);
    } else {
      if (!o.http)
        return {
          error: `the Dynatrace sampler of "${p.name}" could not get http settings: set its httpService, or the provider's http`,
        };
      service = httpService(at.cluster, joinPath(at.hostname, 'api/v2/samplingConfiguration'), o.http);
    }
    sampler = typed('envoy.tracers.opentelemetry.samplers.dynatrace', DYNATRACE_SAMPLER, {
      ...(dt.tenant ? { tenant: dt.tenant } : {}),
      ...(dt.clusterId ? { cluster_id: dt.clusterId } : {}),
      ...(dt.rootSpansPerMinute ? { root_spans_per_minute: dt.rootSpansPerMinute } : {}),
      http_service: service,
    });
  }
  const exporter = o.http
    ? { http_service: httpService(at.cluster, joinPath(at.hostname, o.http.path), o.http) }
    : {
        grpc_service: {
          envoy_grpc: { cluster_name: at.cluster, authority: at.hostname },
          ...(o.grpc?.timeoutMs !== undefined ? { timeout: durationMs(o.grpc.timeoutMs) } : {}),
          ...(o.grpc?.initialMetadata?.length
            ? { initial_metadata: o.grpc.initialMetadata.map((h) => ({ key: h.name, value: h.value })) }
            : {}),
        },
      };
  return {
    name: 'envoy.tracers.opentelemetry',
    config: packAny(OTEL_CONFIG, { ...exporter, resource_detectors: detectors, ...(sampler ? { sampler } : {}) }),
    ...(o.maxTagLength ? { maxTagLength: o.maxTagLength } : {}),
    ...(sampler ? { customSampler: true as const } : {}),
    clusters,
  };
}

/** istiod's buildCustomTagsFromProvider (formatter tags were reported at validation: not encodable here). */
function telemetryTags(tags: Readonly<Record<string, TelemetryCustomTag>>): CustomTag[] {
  const out: CustomTag[] = [];
  for (const [tag, t] of Object.entries(tags)) {
    if ('literal' in t) out.push({ tag, literal: { value: t.literal } });
    else if ('environment' in t)
      out.push({
        tag,
        environment: {
          name: t.environment.name,
          ...(t.environment.defaultValue ? { default_value: t.environment.defaultValue } : {}),
        },
      });
    else if ('header' in t)
      out.push({
        tag,
        request_header: {
          name: t.header.name,
          ...(t.header.defaultValue ? { default_value: t.header.defaultValue } : {}),
        },
      });
  }
  return out;
}

/** No tracing on the HCMs (and Envoy's default request id extension). */
export const NOT_TRACED: HcmTracingChoice = Object.freeze({ clusters: [] });
const NO_SAMPLING_BY_ID: RequestIdExtension = deepFreeze({
  typed_config: packAny(UUID_CONFIG, { use_request_id_for_trace_sampling: { value: false } }),
});

export interface TracingIndex {
  /**
   * What the Telemetry path puts on the HCMs of `mode` listeners of a proxy of `namespace`
   * selected by the workload Telemetries `workload`, with the ProxyConfig `proxy` (the mesh's
   * `defaultConfig.tracing`, or a gateway's own); undefined: the legacy path (./tracing.ts).
   */
  choice(
    mode: TelemetryLogMode,
    telemetries: readonly Telemetry[],
    proxy: ProxyTracing | undefined,
    gateway: boolean,
  ): HcmTracingChoice | undefined;
  /** Whether any Telemetry traces or the mesh names a default tracing provider (else: nothing to do). */
  readonly active: boolean;
}

/** The index of one compile; providers istiod configures no tracer for are reported once, here. */
export function indexTracing(
  mesh: MeshConfig,
  telemetries: readonly Telemetry[],
  lookup: CollectorLookup,
  diags: Diagnostics,
): TracingIndex {
  const defaults = mesh.defaultTracingProviders ?? [];
  const active = defaults.length > 0 || telemetries.some((t) => t.tracing?.length);
  if (!active) return { active, choice: () => undefined };
  const providers = mesh.extensionProviders ?? [];
  // istiod's fetchProvider: the first of the mesh's providers by name, case-insensitively.
  const fetch = (name: string): ExtensionProvider | undefined => {
    const folded = name.toLowerCase();
    return providers.find((p) => p.name.toLowerCase() === folded);
  };
  const tracers = new Map<ExtensionProvider, BuiltTracer>();
  const tracerOf = (p: ExtensionProvider): BuiltTracer => {
    let t = tracers.get(p);
    if (!t) tracers.set(p, (t = buildTracer(p, lookup)));
    return t;
  };
  reportProviders(mesh, telemetries, fetch, tracerOf, diags);

  const specs = new Map<string, TracingSpec | undefined>();
  const choices = new Map<TracingSpec, Map<ProxyTracing | undefined, Map<boolean, HcmTracingChoice>>>();
  return {
    active,
    choice(mode, applicable, proxy, gateway) {
      const key = `${mode}|${applicable.map((t) => `${t.meta.namespace}/${t.meta.name}`).join(',')}`;
      let spec = specs.get(key);
      if (!specs.has(key)) specs.set(key, (spec = mergeTracing(applicable, defaults, mode, fetch)));
      if (!spec) return undefined;
      let byProxy = choices.get(spec);
      if (!byProxy) choices.set(spec, (byProxy = new Map()));
      let byGateway = byProxy.get(proxy);
      if (!byGateway) byProxy.set(proxy, (byGateway = new Map()));
      let out = byGateway.get(gateway);
      if (!out) byGateway.set(gateway, (out = buildChoice(spec, proxy, gateway, tracerOf)));
      return out;
    },
  };
}

/** configureTracingFromTelemetry for one spec, ProxyConfig and proxy kind. */
function buildChoice(
  spec: TracingSpec,
  proxy: ProxyTracing | undefined,
  gateway: boolean,
  tracerOf: (p: ExtensionProvider) => BuiltTracer,
): HcmTracingChoice {
  if (spec.disabled || !spec.provider) return NOT_TRACED;
  const tracer = tracerOf(spec.provider);
  if ('error' in tracer) return NOT_TRACED;
  const sampling = tracer.customSampler ? 100 : (spec.randomSamplingPercentage ?? proxyConfigSampling(proxy));
  const own = spec.customTags && Object.keys(spec.customTags).length > 0 ? telemetryTags(spec.customTags) : undefined;
  const tags = sortTags([...(spec.enableIstioTags ? istioTags() : []), ...(own ?? proxyConfigTags(proxy))]);
  const maxPathTagLength = tracer.maxTagLength ?? proxy?.maxPathTagLength;
  const tracing: HcmTracing = {
    ...(gateway || tracer.spawnUpstreamSpan ? { spawn_upstream_span: { value: true } } : {}),
    provider: { name: tracer.name, typed_config: tracer.config },
    client_sampling: { value: 100 },
    random_sampling: { value: sampling },
    overall_sampling: { value: 100 },
    custom_tags: tags,
    ...(maxPathTagLength ? { max_path_tag_length: { value: maxPathTagLength } } : {}),
  };
  return deepFreeze({
    tracing,
    ...(spec.useRequestIdForTraceSampling ? {} : { requestId: NO_SAMPLING_BY_ID }),
    clusters: tracer.clusters.map((c) => ({ hostname: c.hostname, port: c.port })),
    provider: spec.provider.name,
  });
}

/** Warnings for default and Telemetry providers istiod configures no tracer for. */
function reportProviders(
  mesh: MeshConfig,
  telemetries: readonly Telemetry[],
  fetch: (name: string) => ExtensionProvider | undefined,
  tracerOf: (p: ExtensionProvider) => BuiltTracer,
  diags: Diagnostics,
): void {
  const check = (name: string, at: Record<string, unknown>) => {
    const p = fetch(name);
    const why = p
      ? tracerOf(p)
      : { error: `tracing provider "${name.slice(0, 80)}" is not an extension provider of the mesh config` };
    if ('error' in why)
      diags.warn({
        ...at,
        code: p ? 'unsupported-provider' : 'unknown-provider',
        message: `${why.error}: proxies it applies to do not trace, as with istiod`,
      });
  };
  const first = mesh.defaultTracingProviders?.[0];
  if (first !== undefined) check(first, { kind: 'MeshConfig', field: 'defaultProviders.tracing[0]' });
  for (const t of telemetries)
    t.tracing?.forEach((e, i) => {
      const name = e.providers?.[0];
      if (name !== undefined) check(name, objectAt('Telemetry', t, `spec.tracing[${i}].providers[0]`));
    });
}

/** The tracer's clusters a proxy seeing these services lacks in its CDS (none: it may trace). */
export const unseenClusters = (
  choice: HcmTracingChoice,
  seen: ReadonlyMap<string, MeshService>,
): HcmTracingChoice['clusters'] =>
  choice.clusters.filter((c) => seen.get(c.hostname)?.ports.some((p) => p.port === c.port) !== true);

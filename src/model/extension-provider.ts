/**
 * Mesh config `extensionProviders` entries the compiler reads: external authorization (the
 * authorization builder), file access logs (Telemetry access logging) and tracers (Telemetry tracing).
 */
import type { JsonValue } from './json-value.js';

export interface ExtAuthzRequestBody {
  readonly maxRequestBytes?: number;
  readonly allowPartialMessage?: boolean;
  readonly packAsBytes?: boolean;
}

interface ExtAuthzCommon {
  /** `[<namespace>/]<hostname>` of the authorization service. */
  readonly service: string;
  readonly port: number;
  /** Milliseconds; absent means 600 s, as istiod. */
  readonly timeoutMs?: number;
  readonly failOpen?: boolean;
  readonly statusOnError?: string;
  readonly includeRequestBodyInCheck?: ExtAuthzRequestBody;
}

export interface ExtAuthzHttpProvider extends ExtAuthzCommon {
  readonly pathPrefix?: string;
  readonly includeRequestHeadersInCheck?: readonly string[];
  /** Deprecated; used only when includeRequestHeadersInCheck is empty. */
  readonly includeHeadersInCheck?: readonly string[];
  readonly includeAdditionalHeadersInCheck?: Readonly<Record<string, string>>;
  readonly headersToUpstreamOnAllow?: readonly string[];
  readonly headersToDownstreamOnDeny?: readonly string[];
  readonly headersToDownstreamOnAllow?: readonly string[];
}

export type ExtAuthzGrpcProvider = ExtAuthzCommon;

/** `envoyFileAccessLog`: istiod's fileAccessLogFromTelemetry. */
export interface EnvoyFileAccessLogProvider {
  /** Absent or empty: /dev/stdout. */
  readonly path?: string;
  /** `logFormat`: `text`, `labels` (a JSON format), or neither (set but empty: Envoy's own format). */
  readonly logFormat?: {
    readonly text?: string;
    readonly labels?: Readonly<Record<string, JsonValue>>;
  };
  readonly omitEmptyValues?: true;
}

/** Access log providers meshsnap does not build (gRPC access log services, OpenTelemetry). */
export type UnbuiltAccessLogProvider = 'envoyHttpAls' | 'envoyTcpAls' | 'envoyOtelAls';

export interface ExtensionProvider {
  readonly name: string;
  readonly envoyFileAccessLog?: EnvoyFileAccessLogProvider;
  /** Set for an access log provider of a kind meshsnap does not build. */
  readonly unbuiltAccessLog?: UnbuiltAccessLogProvider;
  readonly envoyExtAuthzHttp?: ExtAuthzHttpProvider;
  readonly envoyExtAuthzGrpc?: ExtAuthzGrpcProvider;
  /** Tracing providers (Telemetry tracing, `defaultProviders.tracing`). */
  readonly zipkin?: ZipkinTracingProvider;
  readonly datadog?: DatadogTracingProvider;
  readonly skywalking?: SkyWalkingTracingProvider;
  readonly opentelemetry?: OpenTelemetryTracingProvider;
  readonly unbuiltTracing?: UnbuiltTracingProvider;
}

/** An `HttpHeader` of a tracing provider: `envName` (a value from istiod's own environment) is not built. */
export interface ProviderHeader {
  readonly name: string;
  readonly value: string;
}

/** The collector of a tracing provider: `[<namespace>/]<hostname>` and a port (istiod's LookupCluster). */
export interface TracingCollector {
  readonly service: string;
  readonly port: number;
}

/** `zipkin` (istiod's zipkinConfig, the form of proxies before Istio 1.29: collector cluster, endpoint, host). */
export interface ZipkinTracingProvider extends TracingCollector {
  readonly maxTagLength?: number;
  readonly enable64bitTraceId?: true;
  /** Absent or empty: /api/v2/spans. */
  readonly path?: string;
}

export interface DatadogTracingProvider extends TracingCollector {
  readonly maxTagLength?: number;
}

export type SkyWalkingTracingProvider = TracingCollector;

/** `opentelemetry.http` / `dynatraceSampler.httpService.http`. */
export interface OtelHttpService {
  readonly path?: string;
  readonly timeoutMs?: number;
  readonly headers?: readonly ProviderHeader[];
}

/** `opentelemetry.dynatraceSampler` (istiod's configureDynatraceSampler). */
export interface DynatraceSampler {
  readonly tenant?: string;
  readonly clusterId?: number;
  readonly rootSpansPerMinute?: number;
  /** `httpService`: its own API endpoint; absent: the exporter's (which must then be HTTP). */
  readonly httpService?: TracingCollector & { readonly http?: OtelHttpService };
}

/** `opentelemetry` (istiod's otelConfig): OTLP over HTTP when `http` is set, else gRPC. */
export interface OpenTelemetryTracingProvider extends TracingCollector {
  readonly maxTagLength?: number;
  readonly http?: OtelHttpService;
  readonly grpc?: { readonly timeoutMs?: number; readonly initialMetadata?: readonly ProviderHeader[] };
  readonly resourceDetectors?: { readonly environment?: true; readonly dynatrace?: true };
  readonly dynatraceSampler?: DynatraceSampler;
}

/** Tracing providers istiod configures no tracer for (it warns; the HCM gets no tracing). */
export type UnbuiltTracingProvider = 'lightstep';

/**
 * Mesh config `extensionProviders` entries the compiler reads: external authorization (the
 * authorization builder) and file access logs (Telemetry access logging).
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
}

import type { ExtensionProvider } from './extension-provider.js';
import type {
  MeshConnectionSettings,
  MeshGatewayTopology,
  MeshProxyHeaders,
  ProxyConfigParts,
  ProxyTracing,
} from './proxy-config.js';
export type {
  ForwardClientCertDetails,
  MeshConnectionSettings,
  MeshGatewayTopology,
  MeshProxyHeaders,
  ProxyConfigParts,
  ProxyTracing,
  TracingCustomTag,
} from './proxy-config.js';
import type { JsonValue } from './json-value.js';
import type { MeshIngressSettings } from './ingress.js';

export type { JsonValue };
import type {
  ConnectionPoolSettings,
  HTTPRetry,
  LocalityLbSetting,
  OutlierDetection,
  TcpKeepalive,
  ZoneAwareLbSetting,
} from './istio.js';

/** The subset of Istio's MeshConfig that changes what meshsnap compiles. */
export interface MeshConfig {
  /** DNS suffix of services: `<name>.<namespace>.svc.<domainSuffix>`. */
  readonly domainSuffix: string;
  /** ALLOW_ANY: unknown destinations pass through; REGISTRY_ONLY: they are black-holed. */
  readonly outboundTrafficPolicy: 'ALLOW_ANY' | 'REGISTRY_ONLY';
  /** Use Istio mTLS towards endpoints that carry `security.istio.io/tlsMode: istio`. */
  readonly enableAutoMtls: boolean;
  /** Cluster connect timeout in milliseconds (Istio default 10s). */
  readonly connectTimeoutMs: number;
  /** Namespace whose Istio config applies mesh-wide (DestinationRule lookup falls back to it). */
  readonly rootNamespace: string;
  /** SPIFFE trust domain of the mesh's identities; absent means Istio's default `cluster.local`. */
  readonly trustDomain?: string;
  /** Other trust domains whose identities authorization policies treat as this one's. */
  readonly trustDomainAliases?: readonly string[];
  /** `caCertificates[].trustDomains`: more trust domains whose clients inbound Istio mTLS accepts. */
  readonly caTrustDomains?: readonly string[];
  /** How often DNS clusters re-resolve (`dnsRefreshRate`), in milliseconds; absent: Istio's 60 s. */
  readonly dnsRefreshRateMs?: number;
  /** exportTo of Services/ServiceEntries, VirtualServices, DestinationRules that set none; absent: `*`. */
  readonly defaultServiceExportTo?: readonly string[];
  readonly defaultVirtualServiceExportTo?: readonly string[];
  readonly defaultDestinationRuleExportTo?: readonly string[];
  /** Named external services (CUSTOM AuthorizationPolicy providers). */
  readonly extensionProviders?: readonly ExtensionProvider[];
  /** `defaultHttpRetryPolicy`: the retries of VirtualService routes that set none (and of default routes). */
  readonly defaultHttpRetryPolicy?: HTTPRetry;
  /** `accessLogFile` (+ encoding, format): the file access log istiod puts on HCMs, tcp_proxies, listeners. */
  readonly accessLog?: MeshAccessLog;
  /**
   * `accessLogEncoding` / `accessLogFormat` without `accessLogFile`: only the built-in `envoy`
   * Telemetry provider reads them (istiod's FileAccessLogFromMeshConfig with its path).
   */
  readonly accessLogFormatting?: MeshAccessLogFormat;
  /** `defaultProviders.accessLogging`: the access log providers of proxies no Telemetry configures. */
  readonly defaultAccessLogProviders?: readonly string[];
  /** `defaultProviders.tracing`: the tracing provider (the first) of proxies no Telemetry names one for. */
  readonly defaultTracingProviders?: readonly string[];
  /** `protocolDetectionTimeout` in milliseconds, when not 0 (Istio's default: no timeout). */
  readonly protocolDetectionTimeoutMs?: number;
  /** `h2UpgradePolicy: UPGRADE` (absent: DO_NOT_UPGRADE): HTTP ports' clusters speak HTTP/2 unless a rule says otherwise. */
  readonly h2Upgrade?: true;
  /** `tcpKeepalive`: every cluster's TCP keepalive, a DestinationRule's attributes over it. */
  readonly tcpKeepalive?: TcpKeepalive;
  /** `defaultTrafficPolicy`: the connection pool / outlier detection of clusters whose rule sets none. */
  readonly defaultTrafficPolicy?: MeshDefaultTrafficPolicy;
  /** Mesh-wide locality / zone-aware load balancing, for clusters whose rule sets neither. */
  readonly localityLbSetting?: LocalityLbSetting;
  readonly zoneAwareLbSetting?: ZoneAwareLbSetting;
  /** `ingressClass`, `ingressControllerMode`, `ingressSelector`, `ingressService` where not istiod's defaults (Kubernetes Ingress). */
  readonly ingress?: MeshIngressSettings;
  /** `meshMTLS`, when set: the TLS parameters of the Istio mTLS servers (inbound chains; istiod's BuildInboundTLS). */
  readonly meshMTLS?: MeshTlsConfig;
  /**
   * `tlsDefaults`, when set: under the TLS servers' own parameters (gateways, Sidecar ingress: SIMPLE,
   * MUTUAL, OPTIONAL_MUTUAL) and, curves and cipher suites only, in SIMPLE / MUTUAL originations.
   */
  readonly tlsDefaults?: MeshTlsConfig;
  /** `defaultConfig.proxyHeaders`, when set: the HTTP headers every proxy adds, keeps or removes. */
  readonly proxyHeaders?: MeshProxyHeaders;
  /** `defaultConfig.gatewayTopology`, when set: what the gateways' HCMs trust of the hops before them. */
  readonly gatewayTopology?: MeshGatewayTopology;
  /** `defaultConfig.connectionSettings`, when set: HCM timeouts, HTTP/2 limits, header and path handling, gateway buffers. */
  readonly connectionSettings?: MeshConnectionSettings;
  /** `enableTracing: false` (istiod's default is true: every HCM traces). */
  readonly tracingDisabled?: true;
  /** `defaultConfig.tracing`, when set: sampling, custom tags, path tag length, Istio's tags. */
  readonly tracing?: ProxyTracing;
  /**
   * `pathNormalization.normalization` where not istiod's default (BASE, DEFAULT): what every HCM
   * does to request paths (istiod's buildHTTPConnectionManager).
   */
  readonly pathNormalization?: 'NONE' | 'MERGE_SLASHES' | 'DECODE_AND_MERGE_SLASHES';
  /**
   * `inboundTrafficPolicy.mode: LOCALHOST` (absent: PASSTHROUGH, istiod's default): inbound clusters
   * built from the services' ports send to 127.0.0.1 instead of the original destination.
   */
  readonly inboundTrafficPolicy?: 'LOCALHOST';
  /** `proxyListenPort` where not 15001: the port of sidecars' `virtualOutbound` (iptables' outbound redirect). */
  readonly proxyListenPort?: number;
  /** `proxyInboundListenPort` where not 15006: the port of sidecars' `virtualInbound` (iptables' inbound redirect). */
  readonly proxyInboundListenPort?: number;
}

/**
 * The mesh config a proxy with a ProxyConfig of its own sees: its parts over the mesh's, field by
 * field (istiod merges the annotation over `defaultConfig` as protobuf messages merge; meshsnap's
 * model keeps only set flags, so an annotation cannot turn a mesh-wide flag back off).
 */
export function withProxyConfig(mesh: MeshConfig, own: ProxyConfigParts | undefined): MeshConfig {
  if (!own) return mesh;
  const headers = own.proxyHeaders && {
    ...mesh.proxyHeaders,
    ...own.proxyHeaders,
    ...(mesh.proxyHeaders?.setCurrentClientCertDetails || own.proxyHeaders.setCurrentClientCertDetails
      ? {
          setCurrentClientCertDetails: {
            ...mesh.proxyHeaders?.setCurrentClientCertDetails,
            ...own.proxyHeaders.setCurrentClientCertDetails,
          },
        }
      : {}),
  };
  const topology = own.gatewayTopology && { ...mesh.gatewayTopology, ...own.gatewayTopology };
  const settings = own.connectionSettings && { ...mesh.connectionSettings, ...own.connectionSettings };
  const tracing = own.tracing && mergeTracing(mesh.tracing, own.tracing);
  return {
    ...mesh,
    ...(tracing ? { tracing } : {}),
    ...(headers ? { proxyHeaders: headers } : {}),
    ...(topology ? { gatewayTopology: topology } : {}),
    ...(settings ? { connectionSettings: settings } : {}),
  };
}

/** A pod's `tracing` over the mesh's, field by field; custom tags merged by tag (a proto map). */
function mergeTracing(mesh: ProxyTracing | undefined, own: ProxyTracing): ProxyTracing {
  const tags = new Map((mesh?.customTags ?? []).map((t) => [t.tag, t]));
  for (const t of own.customTags ?? []) tags.set(t.tag, t);
  const customTags = [...tags.values()].sort((a, b) => (a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : 0));
  return { ...mesh, ...own, ...(customTags.length ? { customTags } : {}) };
}

/**
 * MeshConfig.TLSConfig (`meshMTLS`, `tlsDefaults`): only what is set. `minProtocolVersion` TLS_AUTO
 * is left out; empty lists are unset (istiod's nil).
 */
export interface MeshTlsConfig {
  readonly minProtocolVersion?: 'TLSV1_2' | 'TLSV1_3';
  readonly ecdhCurves?: readonly string[];
  readonly cipherSuites?: readonly string[];
}

/** MeshConfig.DefaultTrafficPolicy: whole blocks, each taken where the rule leaves that block unset. */
export interface MeshDefaultTrafficPolicy {
  readonly connectionPool?: ConnectionPoolSettings;
  readonly outlierDetection?: OutlierDetection;
}

/** MeshConfig's access log fields, read when `accessLogFile` is set. */
export interface MeshAccessLog extends MeshAccessLogFormat {
  /** `accessLogFile`. */
  readonly path: string;
}

/** `accessLogEncoding` and `accessLogFormat`. */
export interface MeshAccessLogFormat {
  /** `accessLogEncoding`: TEXT (the default) or JSON. */
  readonly encoding: 'TEXT' | 'JSON';
  /** TEXT: `accessLogFormat` when set (the compiler adds the newline istiod adds). */
  readonly text?: string;
  /** JSON: `accessLogFormat` parsed as a JSON object, when set and valid. */
  readonly json?: Readonly<Record<string, JsonValue>>;
}

/** Istio's default `dnsRefreshRate`. */
export const DEFAULT_DNS_REFRESH_RATE_MS = 60_000;
/** istiod's `proxyListenPort` and `proxyInboundListenPort` defaults (pkg/config/mesh DefaultMeshConfig). */
export const DEFAULT_PROXY_LISTEN_PORT = 15001;
export const DEFAULT_PROXY_INBOUND_LISTEN_PORT = 15006;

/** Istio's default trust domain. */
export const DEFAULT_TRUST_DOMAIN = 'cluster.local';

export const DEFAULT_MESH_CONFIG: MeshConfig = {
  domainSuffix: 'cluster.local',
  outboundTrafficPolicy: 'ALLOW_ANY',
  enableAutoMtls: true,
  connectTimeoutMs: 10_000,
  rootNamespace: 'istio-system',
};

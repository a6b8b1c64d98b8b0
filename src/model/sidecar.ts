/**
 * Istio networking resource `Sidecar` (networking.istio.io v1/v1beta1/v1alpha3): what a sidecar
 * proxy sees of the mesh (egress listeners' hosts), what it accepts (ingress listeners) and where
 * unknown destinations go. The inputs layer validates raw documents into these types.
 */
import type { Origin } from './diagnostics.js';
import type { TlsProtocolVersion } from './gateway.js';
import type { ObjectMeta } from './k8s.js';
import type { ConnectionPoolSettings } from './istio.js';
import type { Protocol } from './service-model.js';

export interface SidecarPort {
  readonly number: number;
  readonly protocol?: string;
  readonly name?: string;
}

const PROTOCOLS: Readonly<Record<string, Protocol>> = {
  HTTP: 'HTTP',
  HTTP2: 'HTTP2',
  GRPC: 'GRPC',
  'GRPC-WEB': 'GRPC-Web',
  HTTPS: 'HTTPS',
  TLS: 'TLS',
  TCP: 'TCP',
  MONGO: 'Mongo',
  REDIS: 'Redis',
  MYSQL: 'MySQL',
  UDP: 'UDP',
};

/** A Sidecar port's protocol as istiod's protocol.Parse reads it (validation upper-cases it); unset or unknown: Unsupported. */
export const sidecarPortProtocol = (port: SidecarPort): Protocol =>
  PROTOCOLS[(port.protocol ?? '').toUpperCase()] ?? 'Unsupported';

/** istiod's UnixAddressPrefix: a `bind` naming a unix domain socket. */
export const UNIX_BIND_PREFIX = 'unix://';

/** `hosts`: `namespace/dnsName` with `.`, `*`, or a `~`-prefixed namespace (an exclusion). */
export interface SidecarEgressListener {
  readonly port?: SidecarPort;
  readonly bind?: string;
  readonly captureMode?: string;
  readonly hosts: readonly string[];
}

export interface SidecarIngressTls {
  readonly mode?: 'PASSTHROUGH' | 'SIMPLE' | 'MUTUAL' | 'OPTIONAL_MUTUAL';
  readonly serverCertificate?: string;
  readonly privateKey?: string;
  readonly caCertificates?: string;
  readonly minProtocolVersion?: TlsProtocolVersion;
  readonly maxProtocolVersion?: TlsProtocolVersion;
  readonly cipherSuites?: readonly string[];
  readonly ecdhCurves?: readonly string[];
  /** A CRL file on the proxy, checked against client certificates (MUTUAL, OPTIONAL_MUTUAL). */
  readonly caCrl?: string;
  readonly insecureSkipVerify?: boolean;
}

export interface SidecarIngressListener {
  readonly port: SidecarPort;
  readonly bind?: string;
  readonly defaultEndpoint?: string;
  readonly tls?: SidecarIngressTls;
  /** Overrides `inboundConnectionPool` (and any DestinationRule's) on this port's inbound cluster. */
  readonly connectionPool?: ConnectionPoolSettings;
}

export interface SidecarOutboundTrafficPolicy {
  readonly mode: 'ALLOW_ANY' | 'REGISTRY_ONLY';
  /** Where ALLOW_ANY sends unknown destinations instead of PassthroughCluster. */
  readonly egressProxy?: { readonly host: string; readonly subset?: string; readonly port?: number };
}

export interface SidecarSpec {
  readonly workloadSelector?: { readonly labels: Readonly<Record<string, string>> };
  readonly egress?: readonly SidecarEgressListener[];
  readonly ingress?: readonly SidecarIngressListener[];
  readonly outboundTrafficPolicy?: SidecarOutboundTrafficPolicy;
  /** The inbound clusters' connection pool, over a DestinationRule's (istiod's InboundConnectionPoolForPort). */
  readonly inboundConnectionPool?: ConnectionPoolSettings;
}

export interface Sidecar {
  readonly kind: 'Sidecar';
  readonly apiVersion: string;
  readonly meta: ObjectMeta;
  /** RFC 3339 as the API server writes it; of several Sidecars for one workload the oldest wins, as in istiod. */
  readonly creationTimestamp?: string;
  readonly origin: Origin;
  readonly spec: SidecarSpec;
}

import type { ExtensionProvider } from './extension-provider.js';

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
  /** How often DNS clusters re-resolve (`dnsRefreshRate`), in milliseconds; absent: Istio's 60 s. */
  readonly dnsRefreshRateMs?: number;
  /** exportTo of Services/ServiceEntries, VirtualServices, DestinationRules that set none; absent: `*`. */
  readonly defaultServiceExportTo?: readonly string[];
  readonly defaultVirtualServiceExportTo?: readonly string[];
  readonly defaultDestinationRuleExportTo?: readonly string[];
  /** Named external services (CUSTOM AuthorizationPolicy providers). */
  readonly extensionProviders?: readonly ExtensionProvider[];
}

/** Istio's default `dnsRefreshRate`. */
export const DEFAULT_DNS_REFRESH_RATE_MS = 60_000;

/** Istio's default trust domain. */
export const DEFAULT_TRUST_DOMAIN = 'cluster.local';

export const DEFAULT_MESH_CONFIG: MeshConfig = {
  domainSuffix: 'cluster.local',
  outboundTrafficPolicy: 'ALLOW_ANY',
  enableAutoMtls: true,
  connectTimeoutMs: 10_000,
  rootNamespace: 'istio-system',
};

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
}

export const DEFAULT_MESH_CONFIG: MeshConfig = {
  domainSuffix: 'cluster.local',
  outboundTrafficPolicy: 'ALLOW_ANY',
  enableAutoMtls: true,
  connectTimeoutMs: 10_000,
  rootNamespace: 'istio-system',
};

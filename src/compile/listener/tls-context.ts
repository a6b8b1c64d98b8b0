/**
 * The server side of Istio mTLS on inbound chains (istiod: BuildInboundTLS for PERMISSIVE/STRICT).
 * Certificates are never in the config: Envoy fetches them by name (`default`, `ROOTCA`) over SDS
 * from the `sds-grpc` cluster of its bootstrap, i.e. from the local istio-agent.
 */
import { DEFAULT_TRUST_DOMAIN, type MeshConfig, type MeshTlsConfig } from '../../model/mesh-config.js';
import type { SidecarIngressTls } from '../../model/sidecar.js';
import { envoy, packAny } from '../../xds/proto.js';
import { gatewayTlsContext } from '../gateway/downstream-tls.js';
import { TypeName } from '../../xds/type-urls.js';
import { deepFreeze } from '../intern.js';
import { bool, FilterName } from './filters.js';

type DownstreamTlsContext = envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext.$Properties;
type TransportSocket = envoy.config.core.v3.TransportSocket.$Properties;
type SdsSecretConfig = envoy.extensions.transport_sockets.tls.v3.SdsSecretConfig.$Properties;

const V3 = envoy.config.core.v3.ApiVersion.V3;
const TlsProtocol = envoy.extensions.transport_sockets.tls.v3.TlsParameters.TlsProtocol;

export const SDS_CLUSTER = 'sds-grpc';
export const SDS_CERTIFICATE = 'default';
export const SDS_ROOT_CA = 'ROOTCA';

/** istiod's server-side cipher list for sidecars. */
const CIPHER_SUITES = [
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'AES256-GCM-SHA384',
  'AES128-GCM-SHA256',
];

function sdsSecret(name: string): SdsSecretConfig {
  return {
    name,
    sds_config: {
      api_config_source: {
        api_type: envoy.config.core.v3.ApiConfigSource.ApiType.GRPC,
        set_node_on_first_message_only: true,
        transport_api_version: V3,
        grpc_services: [{ envoy_grpc: { cluster_name: SDS_CLUSTER } }],
      },
      initial_fetch_timeout: { seconds: 0 },
      resource_api_version: V3,
    },
  };
}

/**
 * HTTP chains offer h2/http1.1; TCP chains also `istio-peer-exchange` (metadata exchange). The
 * `istio*` ALPNs the client sends are matched on the chain, never offered back, as they would
 * disturb the negotiation of the real protocol. The mesh's `meshMTLS` sets the minimum version
 * (istiod's GetMinTLSVersion: TLSv1_2 unless TLSV1_3) and replaces the cipher list.
 */
export function inboundMtlsContext(
  kind: 'http' | 'tcp',
  meshMTLS?: MeshTlsConfig,
  trustDomains: readonly string[] = [DEFAULT_TRUST_DOMAIN],
): DownstreamTlsContext {
  return {
    common_tls_context: {
      alpn_protocols: kind === 'tcp' ? ['istio-peer-exchange', 'h2', 'http/1.1'] : ['h2', 'http/1.1'],
      tls_params: {
        cipher_suites: meshMTLS?.cipherSuites ? [...meshMTLS.cipherSuites] : CIPHER_SUITES,
        tls_minimum_protocol_version:
          meshMTLS?.minProtocolVersion === 'TLSV1_3' ? TlsProtocol.TLSv1_3 : TlsProtocol.TLSv1_2,
        tls_maximum_protocol_version: TlsProtocol.TLSv1_3,
      },
      tls_certificate_sds_secret_configs: [sdsSecret(SDS_CERTIFICATE)],
      combined_validation_context: {
        // The client's SPIFFE identity must be of a trust domain of the mesh (istiod's
        // TrustDomainsForValidation, PILOT_SKIP_VALIDATE_TRUST_DOMAIN off).
        default_validation_context: {
          match_subject_alt_names: trustDomains.map((td) => ({ prefix: `spiffe://${td}/` })),
        },
        validation_context_sds_secret_config: sdsSecret(SDS_ROOT_CA),
      },
    },
    require_client_certificate: bool(true),
  };
}

/** Frozen: shared by every inbound mTLS chain of a mesh config, encoded and checked once (../intern.ts). */
const socket = (
  kind: 'http' | 'tcp',
  meshMTLS: MeshTlsConfig | undefined,
  trustDomains: readonly string[],
): TransportSocket =>
  deepFreeze({
    name: FilterName.TlsTransportSocket,
    typed_config: packAny(TypeName.DownstreamTlsContext, inboundMtlsContext(kind, meshMTLS, trustDomains)),
  });

/**
 * The trust domains a client's identity may have (istiod's TrustDomainsForValidation): the mesh's,
 * its aliases, those of its `caCertificates`, each once, none empty.
 */
export function trustDomainsForValidation(mesh: MeshConfig): string[] {
  const all = [
    mesh.trustDomain ?? DEFAULT_TRUST_DOMAIN,
    ...(mesh.trustDomainAliases ?? []),
    ...(mesh.caTrustDomains ?? []),
  ];
  return [...new Set(all.filter((td) => td !== ''))];
}

/** The transport sockets of a mesh config's inbound Istio mTLS chains. */
export interface InboundMtlsSockets {
  readonly http: TransportSocket;
  readonly tcp: TransportSocket;
  /** '' for istiod's defaults; else distinguishes chains shared across workloads. */
  readonly key: string;
}

/** Packed once: every inbound mTLS chain of a kind carries the same transport socket. */
const DEFAULT_SOCKETS: InboundMtlsSockets = Object.freeze({
  http: socket('http', undefined, [DEFAULT_TRUST_DOMAIN]),
  tcp: socket('tcp', undefined, [DEFAULT_TRUST_DOMAIN]),
  key: '',
});
/** By the mesh config's `meshMTLS` and trust domains (a few per process). */
const socketsByConfig = new Map<string, InboundMtlsSockets>();

/** One frozen pair per `meshMTLS` and trust domains (istiod's defaults: none, `cluster.local`). */
export function inboundMtlsSockets(mesh: MeshConfig): InboundMtlsSockets {
  const m = mesh.meshMTLS;
  const trustDomains = trustDomainsForValidation(mesh);
  if (!m && trustDomains.length === 1 && trustDomains[0] === DEFAULT_TRUST_DOMAIN) return DEFAULT_SOCKETS;
  const key = JSON.stringify([m?.minProtocolVersion ?? '', m?.cipherSuites ?? [], trustDomains]);
  let out = socketsByConfig.get(key);
  if (!out) {
    if (socketsByConfig.size >= 64) socketsByConfig.clear();
    socketsByConfig.set(
      key,
      (out = Object.freeze({ http: socket('http', m, trustDomains), tcp: socket('tcp', m, trustDomains), key })),
    );
  }
  return out;
}

/**
 * A Sidecar ingress listener's own server TLS: istiod's BuildListenerTLSContext, as for a gateway
 * server, the mesh's `tlsDefaults` under its own parameters. Mounted files become the agent's SDS
 * resources `file-cert:<cert>~<key>` and `file-root:<ca>`, never inlined key material.
 */
export const sidecarIngressTlsSocket = (tls: SidecarIngressTls, tlsDefaults?: MeshTlsConfig): TransportSocket => ({
  name: FilterName.TlsTransportSocket,
  typed_config: packAny(
    TypeName.DownstreamTlsContext,
    gatewayTlsContext({ ...tls, mode: tls.mode ?? 'PASSTHROUGH' }, false, tlsDefaults),
  ),
});

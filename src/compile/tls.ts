/**
 * Upstream TLS for outbound clusters, as istiod builds it (cluster_tls.go):
 *
 * - DISABLE       → no transport socket.
 * - SIMPLE/MUTUAL → UpstreamTlsContext whose certificates are SDS *references*: a credentialName
 *                   becomes `kubernetes://<name>` (+ `-cacert` for the CA) over ADS, file paths
 *                   become the istio-agent's `file-cert:<cert>~<key>` / `file-root:<ca>` resources
 *                   on `sds-grpc`. Key material is never inlined in a snapshot.
 * - ISTIO_MUTUAL  → the workload certificate `default` and trust bundle `ROOTCA` from the agent's SDS
 *                   (`sds-grpc`), ALPN `istio-peer-exchange,istio`, SNI `outbound_.<port>_.<subset>_.<host>`.
 * - auto mTLS     → the ISTIO_MUTUAL socket only for endpoints labelled `tlsMode: istio`
 *                   (`transport_socket_matches` tlsMode-istio, then tlsMode-disabled → raw_buffer).
 */
import type { ClientTLSSettings } from '../model/istio.js';
import { envoy, encodeMessage, packAny, toStruct, durationMs, withPackedMessage } from '../xds/proto.js';
import { TypeName, typeUrl } from '../xds/type-urls.js';
import { deepFreeze } from './intern.js';

type UpstreamTlsContext = envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext.$Properties;
type CommonTlsContext = envoy.extensions.transport_sockets.tls.v3.CommonTlsContext.$Properties;
type SdsSecretConfig = envoy.extensions.transport_sockets.tls.v3.SdsSecretConfig.$Properties;
type TransportSocket = envoy.config.core.v3.TransportSocket.$Properties;
type TransportSocketMatch = envoy.config.cluster.v3.Cluster.TransportSocketMatch.$Properties;
type ConfigSource = envoy.config.core.v3.ConfigSource.$Properties;

const V3 = envoy.config.core.v3.ApiVersion.V3;
const TlsProtocol = envoy.extensions.transport_sockets.tls.v3.TlsParameters.TlsProtocol;

export const TLS_TRANSPORT_SOCKET = 'envoy.transport_sockets.tls';
export const RAW_BUFFER_TRANSPORT_SOCKET = 'envoy.transport_sockets.raw_buffer';
/** The istio-agent's SDS server, a static cluster in every sidecar's bootstrap. */
export const SDS_CLUSTER = 'sds-grpc';
export const SDS_DEFAULT_RESOURCE = 'default';
export const SDS_ROOT_RESOURCE = 'ROOTCA';
/** istiod's default trust domain; meshsnap's MeshConfig has no trustDomain field (yet). */
export const DEFAULT_TRUST_DOMAIN = 'cluster.local';

const ALPN_IN_MESH = ['istio-peer-exchange', 'istio'];
const ALPN_IN_MESH_H2 = ['istio-peer-exchange', 'istio', 'h2'];
const ALPN_H2_ONLY = ['h2'];

/**
 * The agent's SDS source, exactly as istiod writes it for `default` / `ROOTCA` / file resources.
 * The constants below are deep-frozen: every cluster's TLS context shares them, and the encoder and
 * the Envoy check do their work once per frozen object (./intern.ts).
 */
function agentSdsConfig(initialFetchTimeoutZero: boolean): ConfigSource {
  return deepFreeze({
    api_config_source: {
      api_type: envoy.config.core.v3.ApiConfigSource.ApiType.GRPC,
      set_node_on_first_message_only: true,
      transport_api_version: V3,
      grpc_services: [{ envoy_grpc: { cluster_name: SDS_CLUSTER } }],
    },
    ...(initialFetchTimeoutZero ? { initial_fetch_timeout: durationMs(0) } : {}),
    resource_api_version: V3,
  });
}

const AGENT_SDS = agentSdsConfig(true);
const AGENT_FILE_SDS = agentSdsConfig(false);
/** credentialName secrets are served over ADS; no initial_fetch_timeout so a missing secret does not block the proxy. */
const ADS_SDS: ConfigSource = deepFreeze({ ads: {}, resource_api_version: V3 });

/** The workload certificate and trust bundle references: in every Istio mTLS context. */
const DEFAULT_SECRET: SdsSecretConfig = deepFreeze({ name: SDS_DEFAULT_RESOURCE, sds_config: AGENT_SDS });
const ROOT_SECRET: SdsSecretConfig = deepFreeze({ name: SDS_ROOT_RESOURCE, sds_config: AGENT_SDS });

export const sdsAgentSecret = (name: string): SdsSecretConfig =>
  name === SDS_DEFAULT_RESOURCE
    ? DEFAULT_SECRET
    : name === SDS_ROOT_RESOURCE
      ? ROOT_SECRET
      : { name, sds_config: AGENT_FILE_SDS };

/** `kubernetes://name` unless the credential already names its type (istiod's ToResourceName). */
export function credentialResourceName(credentialName: string): string {
  if (credentialName.startsWith('builtin://')) return SDS_DEFAULT_RESOURCE;
  if (/^(kubernetes|kubernetes-gateway|configmap):\/\//.test(credentialName)) return credentialName;
  return `kubernetes://${credentialName}`;
}

export const credentialSecret = (credentialName: string): SdsSecretConfig => ({
  name: credentialResourceName(credentialName),
  sds_config: ADS_SDS,
});

const DEFAULT_TLS_PARAMS: CommonTlsContext['tls_params'] = deepFreeze({
  tls_minimum_protocol_version: TlsProtocol.TLSv1_2,
  tls_maximum_protocol_version: TlsProtocol.TLSv1_3,
});

const exactSans = (sans: readonly string[] | undefined) => (sans ?? []).map((exact) => ({ exact }));

/** `spiffe://<trust domain>/ns/<ns>/sa/<sa>`: the identity istiod expects from a workload. */
export const spiffeId = (namespace: string, serviceAccount: string, trustDomain = DEFAULT_TRUST_DOMAIN): string =>
  `spiffe://${trustDomain}/ns/${namespace}/sa/${serviceAccount}`;

export interface IstioMutualOptions {
  readonly sni: string;
  /** SPIFFE ids the server certificate must carry (empty: any mesh identity). */
  readonly subjectAltNames: readonly string[];
  readonly http2: boolean;
}

export function istioMutualTlsContext(opts: IstioMutualOptions): UpstreamTlsContext {
  return {
    common_tls_context: {
      tls_params: DEFAULT_TLS_PARAMS,
      tls_certificate_sds_secret_configs: [DEFAULT_SECRET],
      combined_validation_context: {
        default_validation_context: { match_subject_alt_names: exactSans(opts.subjectAltNames) },
        validation_context_sds_secret_config: ROOT_SECRET,
      },
      alpn_protocols: opts.http2 ? ALPN_IN_MESH_H2 : ALPN_IN_MESH,
    },
    sni: opts.sni,
  };
}

/** Why a user TLS setting produced no context (reported by the caller). */
export type TlsProblem = 'mutual-without-client-cert' | 'inline-key-material';

/** The fields are file paths; PEM text pasted into them must not end up in a snapshot. */
const looksLikePem = (v: string | undefined): boolean => v !== undefined && v.includes('-----BEGIN');

/** SIMPLE / MUTUAL origination from a DestinationRule (istiod's constructUpstreamTLS). */
export function userTlsContext(tls: ClientTLSSettings, http2: boolean): UpstreamTlsContext | TlsProblem {
  const mutual = tls.mode === 'MUTUAL';
  if (looksLikePem(tls.privateKey) || looksLikePem(tls.clientCertificate) || looksLikePem(tls.caCertificates))
    return 'inline-key-material';
  const common: CommonTlsContext = { tls_params: DEFAULT_TLS_PARAMS };
  if (tls.credentialName) {
    if (mutual) common.tls_certificate_sds_secret_configs = [credentialSecret(tls.credentialName)];
    if (!tls.insecureSkipVerify) {
      common.combined_validation_context = {
        default_validation_context: { match_subject_alt_names: exactSans(tls.subjectAltNames) },
        validation_context_sds_secret_config: credentialSecret(`${tls.credentialName}-cacert`),
      };
    }
  } else {
    if (mutual) {
      if (!tls.clientCertificate || !tls.privateKey) return 'mutual-without-client-cert';
      // Paths only: the agent reads the files and serves them over SDS.
      common.tls_certificate_sds_secret_configs = [
        sdsAgentSecret(`file-cert:${tls.clientCertificate}~${tls.privateKey}`),
      ];
    }
    if (tls.insecureSkipVerify) {
      common.validation_context = {};
    } else {
      common.combined_validation_context = {
        default_validation_context: { match_subject_alt_names: exactSans(tls.subjectAltNames) },
        validation_context_sds_secret_config: sdsAgentSecret(`file-root:${tls.caCertificates || 'system'}`),
      };
    }
  }
  if (http2) common.alpn_protocols = ALPN_H2_ONLY;
  return { common_tls_context: common, ...(tls.sni ? { sni: tls.sni } : {}) };
}

export const tlsTransportSocket = (ctx: UpstreamTlsContext): TransportSocket => ({
  name: TLS_TRANSPORT_SOCKET,
  typed_config: packAny(TypeName.UpstreamTlsContext, ctx),
});

/**
 * The Istio mTLS socket of a cluster, packed fast: only the SNI differs between the clusters of a
 * service, so the encoded common_tls_context (field 1) is cached per SAN list and the SNI (field 2)
 * appended. Protobuf messages are the concatenation of their fields, so the bytes equal a full encode.
 */
export function istioMutualTransportSocket(opts: IstioMutualOptions): TransportSocket {
  const key = `${opts.http2 ? 'h2' : 'h1'}|${opts.subjectAltNames.join(',')}`;
  let common = commonCache.get(key);
  if (!common) {
    // Frozen: the clusters of a service share it (and its parts with every other context).
    const withoutSni = deepFreeze({ common_tls_context: istioMutualTlsContext(opts).common_tls_context });
    common = { bytes: encodeMessage(TypeName.UpstreamTlsContext, withoutSni), context: withoutSni };
    if (commonCache.size >= 4096) commonCache.clear();
    commonCache.set(key, common);
  }
  const value = withSniField(common.bytes, opts.sni);
  // The message the bytes encode, for the acceptance check (it walks it rather than decode the bytes).
  const context: UpstreamTlsContext = { ...common.context, sni: opts.sni };
  const any = withPackedMessage({ type_url: typeUrl(TypeName.UpstreamTlsContext), value }, context);
  return { name: TLS_TRANSPORT_SOCKET, typed_config: any };
}

const utf8 = new TextEncoder();

/**
 * `head` followed by UpstreamTlsContext field 2 (`sni`, length-delimited: tag 0x12, varint length,
 * UTF-8 bytes) written in place: what encoding `{ sni }` on its own gives, without a writer per cluster.
 * An empty SNI is proto3's default and is not written.
 */
function withSniField(head: Uint8Array, sni: string): Uint8Array {
  if (sni === '') return head.slice();
  const text = utf8.encode(sni);
  let lengthBytes = 1;
  for (let n = text.length; n >= 0x80; n >>>= 7) lengthBytes++;
  const out = new Uint8Array(head.length + 1 + lengthBytes + text.length);
  out.set(head, 0);
  let at = head.length;
  out[at++] = 0x12;
  for (let n = text.length; ; n >>>= 7) {
    if (n < 0x80) {
      out[at++] = n;
      break;
    }
    out[at++] = (n & 0x7f) | 0x80;
  }
  out.set(text, at);
  return out;
}

/** Per ALPN and SAN list: the encoded common_tls_context and the context without SNI it encodes. */
const commonCache = new Map<string, { readonly bytes: Uint8Array; readonly context: UpstreamTlsContext }>();

/** Frozen: every auto-mTLS cluster ends with the same plaintext match (./intern.ts). */
const TLS_MODE_DISABLED: TransportSocketMatch = deepFreeze({
  name: 'tlsMode-disabled',
  match: {},
  transport_socket: { name: RAW_BUFFER_TRANSPORT_SOCKET, typed_config: packAny(TypeName.RawBuffer, {}) },
});
const TLS_MODE_ISTIO_MATCH = deepFreeze(toStruct({ tlsMode: 'istio' }));

/** Auto mTLS: Istio mTLS towards endpoints with a sidecar, plaintext to the rest. */
export function autoMtlsSocketMatches(istioMutual: TransportSocket): TransportSocketMatch[] {
  return [{ name: 'tlsMode-istio', match: TLS_MODE_ISTIO_MATCH, transport_socket: istioMutual }, TLS_MODE_DISABLED];
}

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
import type { MeshTlsConfig } from '../model/mesh-config.js';
import { envoy, encodeMessage, packAny, toStruct, durationMs, withPackedMessage } from '../xds/proto.js';
import { TypeName, typeUrl } from '../xds/type-urls.js';
import { deepFreeze } from './intern.js';
import { header, headerLength, joinFields, writeHeader } from '../xds/wire/splice.js';

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

/** Frozen, as the contexts holding them (./intern.ts). */
const ALPN_IN_MESH = deepFreeze(['istio-peer-exchange', 'istio']);
const ALPN_IN_MESH_H2 = deepFreeze(['istio-peer-exchange', 'istio', 'h2']);
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

/** Frozen per `tlsDefaults`: the clusters of a mesh config share one (./intern.ts). */
const upstreamParamsByDefaults = new WeakMap<MeshTlsConfig, CommonTlsContext['tls_params']>();

/**
 * istiod's applyTLSDefaults: the mesh's `tlsDefaults` curves and cipher suites, where set, over the
 * upstream defaults (its minimum version is for servers only).
 */
function upstreamTlsParams(d: MeshTlsConfig | undefined): CommonTlsContext['tls_params'] {
  if (!d || (!d.ecdhCurves?.length && !d.cipherSuites?.length)) return DEFAULT_TLS_PARAMS;
  let params = upstreamParamsByDefaults.get(d);
  if (!params) {
    params = deepFreeze({
      ...DEFAULT_TLS_PARAMS,
      ...(d.ecdhCurves?.length ? { ecdh_curves: [...d.ecdhCurves] } : {}),
      ...(d.cipherSuites?.length ? { cipher_suites: [...d.cipherSuites] } : {}),
    });
    upstreamParamsByDefaults.set(d, params);
  }
  return params;
}

/**
 * SIMPLE / MUTUAL origination from a DestinationRule (istiod's constructUpstreamTLS), with the
 * mesh's `tlsDefaults` curves and cipher suites.
 */
export function userTlsContext(
  tls: ClientTLSSettings,
  http2: boolean,
  tlsDefaults?: MeshTlsConfig,
): UpstreamTlsContext | TlsProblem {
  const mutual = tls.mode === 'MUTUAL';
  if (looksLikePem(tls.privateKey) || looksLikePem(tls.clientCertificate) || looksLikePem(tls.caCertificates))
    return 'inline-key-material';
  const common: CommonTlsContext = { tls_params: upstreamTlsParams(tlsDefaults) };
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
        default_validation_context: {
          match_subject_alt_names: exactSans(tls.subjectAltNames),
          // The CRL file on the proxy (with a credentialName it comes in the secret instead).
          ...(tls.caCrl ? { crl: { filename: tls.caCrl } } : {}),
        },
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
 * service, so the encoded common_tls_context (field 1) is kept per ALPN and SAN list and the SNI
 * (field 2) appended. Protobuf messages are the concatenation of their fields, so the bytes equal a
 * full encode.
 */
export function istioMutualTransportSocket(opts: IstioMutualOptions): TransportSocket {
  const common = commonContext(opts.subjectAltNames, opts.http2);
  const value = withSniField(common.bytes, opts.sni);
  // The message the bytes encode, for the acceptance check (it walks it rather than decode the bytes).
  const context: UpstreamTlsContext = { ...common.context, sni: opts.sni };
  const any = withPackedMessage({ type_url: UPSTREAM_TLS_URL, value }, context);
  return { name: TLS_TRANSPORT_SOCKET, typed_config: any };
}

const UPSTREAM_TLS_URL = typeUrl(TypeName.UpstreamTlsContext);

/** The encoded common_tls_context (UpstreamTlsContext field 1, header included) and the context without SNI it encodes. */
interface CommonContext {
  readonly bytes: Uint8Array;
  readonly context: UpstreamTlsContext;
}

/** What a SAN list gives every context naming it: its validation context, frozen, and that field's bytes. */
interface SanEntry {
  readonly validation: CommonTlsContext['combined_validation_context'];
  /** CommonTlsContext field 8 (combined_validation_context), header included. */
  readonly field: Uint8Array;
  h1?: CommonContext;
  h2?: CommonContext;
}

/**
 * Per SAN list, found by the list itself (a service's clusters pass the one list) and else by its
 * text (equal lists of other services or scopes share one validation context and its bytes).
 */
const sanEntriesByList = new WeakMap<readonly string[], SanEntry>();
const sanEntriesByText = new Map<string, SanEntry>();

function sanEntry(sans: readonly string[]): SanEntry {
  let entry = sanEntriesByList.get(sans);
  if (entry) return entry;
  const text = sans.join(',');
  entry = sanEntriesByText.get(text);
  if (!entry) {
    const validation = deepFreeze({
      default_validation_context: { match_subject_alt_names: exactSans(sans) },
      validation_context_sds_secret_config: ROOT_SECRET,
    });
    // `{ common_tls_context: { combined_validation_context } }` is field 1 holding field 8: field 8's bytes follow field 1's header.
    const wrapped = encodeMessage(TypeName.UpstreamTlsContext, {
      common_tls_context: { combined_validation_context: validation },
    });
    entry = { validation, field: withoutOuterHeader(wrapped) };
    if (sanEntriesByText.size >= 4096) sanEntriesByText.clear();
    sanEntriesByText.set(text, entry);
  }
  sanEntriesByList.set(sans, entry);
  return entry;
}

function commonContext(sans: readonly string[], http2: boolean): CommonContext {
  const entry = sanEntry(sans);
  const known = http2 ? entry.h2 : entry.h1;
  if (known) return known;
  const lead = http2 ? LEADING_FIELDS_H2 : LEADING_FIELDS_H1;
  // Frozen: the clusters of a service share it (and its parts with every other context).
  const context: UpstreamTlsContext = deepFreeze({
    common_tls_context: {
      tls_params: DEFAULT_TLS_PARAMS,
      tls_certificate_sds_secret_configs: DEFAULT_SECRETS,
      combined_validation_context: entry.validation,
      alpn_protocols: http2 ? ALPN_IN_MESH_H2 : ALPN_IN_MESH,
    },
  });
  const common = { bytes: joinFields([header(1, lead.length + entry.field.length), lead, entry.field]), context };
  if (http2) entry.h2 = common;
  else entry.h1 = common;
  return common;
}

/** The bytes of a message that is one length-delimited field, without that field's tag and length. */
function withoutOuterHeader(bytes: Uint8Array): Uint8Array {
  let at = 1;
  while ((bytes[at++] as number) & 0x80);
  return bytes.subarray(at);
}

const DEFAULT_SECRETS = deepFreeze([DEFAULT_SECRET]);

/**
 * CommonTlsContext's fields before field 8 in an Istio mTLS context (tls_params, alpn_protocols,
 * tls_certificate_sds_secret_configs: fields 1, 4, 6), encoded once per ALPN list.
 */
const leadingFields = (alpn: string[]): Uint8Array =>
  withoutOuterHeader(
    encodeMessage(TypeName.UpstreamTlsContext, {
      common_tls_context: {
        tls_params: DEFAULT_TLS_PARAMS,
        tls_certificate_sds_secret_configs: DEFAULT_SECRETS,
        alpn_protocols: alpn,
      },
    }),
  );
const LEADING_FIELDS_H1 = leadingFields(ALPN_IN_MESH);
const LEADING_FIELDS_H2 = leadingFields(ALPN_IN_MESH_H2);

const utf8 = new TextEncoder();

/**
 * `head` followed by UpstreamTlsContext field 2 (`sni`, length-delimited: tag 0x12, varint length,
 * UTF-8 bytes) written in place: what encoding `{ sni }` on its own gives, without a writer per cluster.
 * An empty SNI is proto3's default and is not written. An ASCII SNI (every Kubernetes host name) is
 * copied code unit by code unit, without an encoded copy first.
 */
function withSniField(head: Uint8Array, sni: string): Uint8Array {
  if (sni === '') return head.slice();
  const ascii = isAscii(sni);
  const text = ascii ? undefined : utf8.encode(sni);
  const field = header(2, text ? text.length : sni.length);
  const length = field.length;
  const out = new Uint8Array(head.length + headerLength(field) + length);
  out.set(head, 0);
  const at = writeHeader(out, head.length, field);
  if (text) out.set(text, at);
  else for (let i = 0; i < length; i++) out[at + i] = sni.charCodeAt(i);
  return out;
}

function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) >= 0x80) return false;
  return true;
}

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

/**
 * The DownstreamTlsContext of a gateway server that terminates TLS (istiod's
 * BuildListenerTLSContext for gateways). Certificates are SDS references only:
 *
 * - ISTIO_MUTUAL      → the proxy's own `default` certificate and `ROOTCA` from the istio-agent (`sds-grpc`);
 * - credentialName(s) → `kubernetes://<name>` over ADS (one per name), and `kubernetes://<first>-cacert`
 *                       (or caCertCredentialName) to validate clients for MUTUAL / OPTIONAL_MUTUAL;
 * - file paths        → the agent's file resources `file-cert:<cert>~<key>` (one per tlsCertificates
 *                       pair) and `file-root:<ca>`.
 *
 * SIMPLE / MUTUAL / OPTIONAL_MUTUAL also carry the mesh's `tlsDefaults` (curves, cipher suites,
 * minimum version) and over them the server's own protocol versions, curves and cipher suites.
 * MUTUAL and ISTIO_MUTUAL require a client certificate; OPTIONAL_MUTUAL validates one when sent.
 */
import type { ServerTlsSettings, TlsProtocolVersion } from '../../model/gateway.js';
import type { MeshTlsConfig } from '../../model/mesh-config.js';
import { envoy } from '../../xds/proto.js';
import { bool } from '../listener/filters.js';
import { credentialSecret, SDS_DEFAULT_RESOURCE, SDS_ROOT_RESOURCE, sdsAgentSecret } from '../tls.js';

type DownstreamTlsContext = envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext.$Properties;
type CommonTlsContext = envoy.extensions.transport_sockets.tls.v3.CommonTlsContext.$Properties;
type ValidationContext = envoy.extensions.transport_sockets.tls.v3.CertificateValidationContext.$Properties;

const TlsProtocol = envoy.extensions.transport_sockets.tls.v3.TlsParameters.TlsProtocol;
const TrustChain = envoy.extensions.transport_sockets.tls.v3.CertificateValidationContext.TrustChainVerification;

const ALPN_HTTP = ['h2', 'http/1.1'];
/** A TCP server terminating Istio mTLS also offers metadata exchange. */
const ALPN_DOWNSTREAM_WITH_MX = ['istio-peer-exchange', 'h2', 'http/1.1'];

const PROTOCOL_VERSION: Readonly<Record<TlsProtocolVersion, number>> = {
  TLS_AUTO: TlsProtocol.TLS_AUTO,
  TLSV1_0: TlsProtocol.TLSv1_0,
  TLSV1_1: TlsProtocol.TLSv1_1,
  TLSV1_2: TlsProtocol.TLSv1_2,
  TLSV1_3: TlsProtocol.TLSv1_3,
};

const exact = (sans: readonly string[] | undefined) => (sans ?? []).map((s) => ({ exact: s }));

export function gatewayTlsContext(
  tls: ServerTlsSettings,
  tcpServer: boolean,
  tlsDefaults?: MeshTlsConfig,
): DownstreamTlsContext {
  const common: CommonTlsContext = {
    alpn_protocols: tcpServer && tls.mode === 'ISTIO_MUTUAL' ? ALPN_DOWNSTREAM_WITH_MX : ALPN_HTTP,
  };
  const requireClient = tls.mode === 'MUTUAL' || tls.mode === 'ISTIO_MUTUAL';
  const validateClient = requireClient || tls.mode === 'OPTIONAL_MUTUAL';
  const credentials = tls.credentialNames?.length
    ? tls.credentialNames
    : tls.credentialName
      ? [tls.credentialName]
      : [];
  if (tls.mode === 'ISTIO_MUTUAL') {
    common.tls_certificate_sds_secret_configs = [sdsAgentSecret(SDS_DEFAULT_RESOURCE)];
    common.combined_validation_context = {
      default_validation_context: clientValidation(tls, true),
      validation_context_sds_secret_config: sdsAgentSecret(SDS_ROOT_RESOURCE),
    };
  } else if (credentials.length) {
    common.tls_certificate_sds_secret_configs = credentials.map(credentialSecret);
    if (tls.mode === 'MUTUAL' || tls.mode === 'OPTIONAL_MUTUAL') {
      // One client CA for all credentials: the first one's.
      const ca = tls.caCertCredentialName ?? `${credentials[0]}-cacert`;
      const defaults: ValidationContext = clientValidation(tls, false);
      if (tls.verifyCertificateSpki?.length) defaults.verify_certificate_spki = [...tls.verifyCertificateSpki];
      if (tls.verifyCertificateHash?.length) defaults.verify_certificate_hash = [...tls.verifyCertificateHash];
      common.combined_validation_context = {
        default_validation_context: defaults,
        validation_context_sds_secret_config: credentialSecret(ca),
      };
    } else if (tls.subjectAltNames?.length) {
      common.validation_context = { match_subject_alt_names: exact(tls.subjectAltNames) };
    }
  } else {
    const pairs = tls.tlsCertificates?.length
      ? tls.tlsCertificates
      : [{ serverCertificate: tls.serverCertificate, privateKey: tls.privateKey }];
    common.tls_certificate_sds_secret_configs = pairs.map((p) =>
      sdsAgentSecret(
        p.serverCertificate && p.privateKey ? `file-cert:${p.serverCertificate}~${p.privateKey}` : SDS_DEFAULT_RESOURCE,
      ),
    );
    if (validateClient) {
      common.combined_validation_context = {
        default_validation_context: clientValidation(tls, true),
        validation_context_sds_secret_config: sdsAgentSecret(
          tls.caCertificates ? `file-root:${tls.caCertificates}` : SDS_ROOT_RESOURCE,
        ),
      };
    }
  }
  if (tls.mode === 'SIMPLE' || tls.mode === 'MUTUAL' || tls.mode === 'OPTIONAL_MUTUAL') {
    const params: NonNullable<CommonTlsContext['tls_params']> = {};
    applyDownstreamTlsDefaults(tlsDefaults, params);
    applyServerTlsSettings(tls, params);
    if (Object.keys(params).length) common.tls_params = params;
  }
  return { common_tls_context: common, require_client_certificate: bool(requireClient) };
}

/** SANs to match, the CRL file (not with credentials: it is in the secret) and insecureSkipVerify. */
function clientValidation(tls: ServerTlsSettings, withCrl: boolean): ValidationContext {
  const v: ValidationContext = { match_subject_alt_names: exact(tls.subjectAltNames) };
  if (withCrl && tls.caCrl) v.crl = { filename: tls.caCrl };
  if (tls.insecureSkipVerify) v.trust_chain_verification = TrustChain.ACCEPT_UNTRUSTED;
  return v;
}

type TlsParams = NonNullable<CommonTlsContext['tls_params']>;

/**
 * istiod's applyDownstreamTLSDefaults: the mesh's `tlsDefaults` where set; its minimum version as
 * GetMinTLSVersion maps it (TLSV1_3, else TLSv1_2).
 */
function applyDownstreamTlsDefaults(d: MeshTlsConfig | undefined, params: TlsParams): void {
  if (!d) return;
  if (d.ecdhCurves?.length) params.ecdh_curves = [...d.ecdhCurves];
  if (d.cipherSuites?.length) params.cipher_suites = [...d.cipherSuites];
  if (d.minProtocolVersion)
    params.tls_minimum_protocol_version =
      d.minProtocolVersion === 'TLSV1_3' ? TlsProtocol.TLSv1_3 : TlsProtocol.TLSv1_2;
}

/** istiod's applyServerTLSSettings: only what the server sets (TLS_AUTO leaves the default), over the mesh's. */
function applyServerTlsSettings(tls: ServerTlsSettings, params: TlsParams): void {
  if (tls.minProtocolVersion && tls.minProtocolVersion !== 'TLS_AUTO')
    params.tls_minimum_protocol_version = PROTOCOL_VERSION[tls.minProtocolVersion];
  if (tls.ecdhCurves?.length) params.ecdh_curves = [...tls.ecdhCurves];
  if (tls.cipherSuites?.length) params.cipher_suites = [...tls.cipherSuites];
  if (tls.maxProtocolVersion && tls.maxProtocolVersion !== 'TLS_AUTO')
    params.tls_maximum_protocol_version = PROTOCOL_VERSION[tls.maxProtocolVersion];
}

/**
 * The TLS part of `meshsnap bootstrap`: how a proxy reaches a relay that serves xDS over TLS.
 *
 * Envoy: the `xds-grpc` cluster gets an UpstreamTlsContext (SNI, ALPN h2, the relay's CA, and for
 * mTLS the proxy's certificate and key), all read from files with `watched_directory`, so a rotated
 * certificate is picked up without a restart.
 *
 * Proxyless gRPC: `channel_creds: [{type: "tls", config: {...}}]` as gRFC A65 defines it (file
 * watcher certificate provider fields), and with a token file `call_creds: [{type:
 * "jwt_token_file"}]` (gRFC A97). @grpc/grpc-js-xds 1.14.1 implements neither: its xDS channel
 * takes only `insecure` or `google_default` (README "Relay security").
 */
import { dirname } from 'node:path';

export interface BootstrapTls {
  /** CA bundle that signed the relay's certificate. */
  readonly caFile: string;
  /** The proxy's certificate and key (mTLS). */
  readonly certFile?: string;
  readonly keyFile?: string;
  /** A service-account token file sent as `authorization: Bearer` (gRPC only; see above). */
  readonly tokenFile?: string;
  /** Server name checked in the relay's certificate. */
  readonly sni: string;
}

const file = (path: string): { filename: string } => ({ filename: path });

export function envoyXdsTransportSocket(tls: BootstrapTls): Record<string, unknown> {
  return {
    name: 'envoy.transport_sockets.tls',
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext',
      sni: tls.sni,
      common_tls_context: {
        alpn_protocols: ['h2'],
        validation_context: {
          trusted_ca: file(tls.caFile),
          watched_directory: { path: dirname(tls.caFile) },
        },
        ...(tls.certFile !== undefined && tls.keyFile !== undefined
          ? {
              tls_certificates: [
                {
                  certificate_chain: file(tls.certFile),
                  private_key: file(tls.keyFile),
                  watched_directory: { path: dirname(tls.certFile) },
                },
              ],
            }
          : {}),
      },
    },
  };
}

export function grpcXdsServerCreds(tls: BootstrapTls): Record<string, unknown> {
  return {
    channel_creds: [
      {
        type: 'tls',
        config: {
          ca_certificate_file: tls.caFile,
          ...(tls.certFile !== undefined && tls.keyFile !== undefined
            ? { certificate_file: tls.certFile, private_key_file: tls.keyFile }
            : {}),
          refresh_interval: '600s',
        },
      },
    ],
    ...(tls.tokenFile !== undefined
      ? { call_creds: [{ type: 'jwt_token_file', config: { jwt_token_file: tls.tokenFile } }] }
      : {}),
  };
}

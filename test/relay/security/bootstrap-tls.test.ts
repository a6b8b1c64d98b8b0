/**
 * `meshsnap bootstrap` for a TLS relay: the Envoy `xds-grpc` cluster carries an UpstreamTlsContext
 * that parses strictly as Envoy's Cluster proto (unknown fields throw), with the CA, the proxy's
 * certificate for mTLS and watched directories; the gRPC bootstrap has gRFC A65 `tls` channel
 * creds (and A97 call creds for a token file); `--insecure` keeps plaintext.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { envoyBootstrap, grpcBootstrap, type BootstrapInput } from '../../../src/cli/commands/bootstrap.js';
import { fromProto3Json } from '../../compile/authz/proto3-json.js';

const base: BootstrapInput = {
  node: 'router~10.0.0.9~gw-1.shop~shop.svc.cluster.local',
  relay: 'meshsnap-relay.meshsnap-system.svc:15012',
  namespace: 'shop',
  labels: { app: 'gw' },
};
const tls = {
  caFile: '/var/run/secrets/meshsnap/relay-ca.crt',
  certFile: '/var/run/secrets/proxy/tls.crt',
  keyFile: '/var/run/secrets/proxy/tls.key',
  tokenFile: '/var/run/secrets/tokens/istio-token',
  sni: 'meshsnap-relay.meshsnap-system.svc',
};

type Cluster = { name: string; transport_socket?: { typed_config: Record<string, unknown> } };
const xdsCluster = (b: Record<string, unknown>): Cluster =>
  (b.static_resources as { clusters: Cluster[] }).clusters.find((c) => c.name === 'xds-grpc') as Cluster;

test('Envoy: the xds-grpc cluster speaks TLS to the relay (a valid Cluster with an UpstreamTlsContext)', () => {
  const cluster = xdsCluster(envoyBootstrap({ ...base, tls }));
  assert.doesNotThrow(() => fromProto3Json('envoy.config.cluster.v3.Cluster', cluster));
  assert.deepEqual(cluster.transport_socket?.typed_config, {
    '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext',
    sni: 'meshsnap-relay.meshsnap-system.svc',
    common_tls_context: {
      alpn_protocols: ['h2'],
      validation_context: {
        trusted_ca: { filename: '/var/run/secrets/meshsnap/relay-ca.crt' },
        watched_directory: { path: '/var/run/secrets/meshsnap' },
      },
      tls_certificates: [
        {
          certificate_chain: { filename: '/var/run/secrets/proxy/tls.crt' },
          private_key: { filename: '/var/run/secrets/proxy/tls.key' },
          watched_directory: { path: '/var/run/secrets/proxy' },
        },
      ],
    },
  });
  assert.equal(xdsCluster(envoyBootstrap(base)).transport_socket, undefined, 'no tls: plaintext (--insecure)');
});

test('gRPC: tls channel_creds (gRFC A65) and jwt_token_file call_creds (gRFC A97); insecure without tls', () => {
  const server = (grpcBootstrap({ ...base, tls }).xds_servers as Record<string, unknown>[])[0];
  assert.deepEqual(server?.channel_creds, [
    {
      type: 'tls',
      config: {
        ca_certificate_file: '/var/run/secrets/meshsnap/relay-ca.crt',
        certificate_file: '/var/run/secrets/proxy/tls.crt',
        private_key_file: '/var/run/secrets/proxy/tls.key',
        refresh_interval: '600s',
      },
    },
  ]);
  assert.deepEqual(server?.call_creds, [
    { type: 'jwt_token_file', config: { jwt_token_file: '/var/run/secrets/tokens/istio-token' } },
  ]);
  const plain = (grpcBootstrap(base).xds_servers as Record<string, unknown>[])[0];
  assert.deepEqual(plain?.channel_creds, [{ type: 'insecure' }]);
});

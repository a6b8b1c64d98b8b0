/**
 * DNS clusters for the jwksUri hosts of the mesh's RequestAuthentications that are not mesh
 * services, named `outbound|<port>||<host>` as the jwt_authn providers reference them (jwt.ts).
 * https URIs get TLS with the host as SNI, verified against the proxy's system CA bundle.
 */
import { durationMs, envoy, packAny, type Cluster } from '../../xds/proto.js';
import { TypeName } from '../../xds/type-urls.js';
import type { CompileContext } from '../context.js';
import { outboundClusterName } from '../names.js';
import { parseJwksUri } from './jwt.js';

const SYSTEM_CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

const { DiscoveryType, DnsLookupFamily, LbPolicy } = envoy.config.cluster.v3.Cluster;

export function buildJwksClusters(ctx: CompileContext): Map<string, Cluster> {
  const out = new Map<string, Cluster>();
  for (const p of ctx.security.requestAuthentications)
    for (const rule of p.spec.jwtRules ?? []) {
      if (rule.jwks !== undefined || rule.jwksUri === undefined) continue;
      const jwks = parseJwksUri(rule.jwksUri);
      if (!jwks || ctx.model.byHostname.has(jwks.host)) continue;
      const name = outboundClusterName(jwks.port, '', jwks.host);
      if (out.has(name)) continue;
      const cluster: Cluster = {
        name,
        type: DiscoveryType.STRICT_DNS,
        dns_lookup_family: DnsLookupFamily.V4_ONLY,
        connect_timeout: durationMs(ctx.mesh.connectTimeoutMs),
        lb_policy: LbPolicy.ROUND_ROBIN,
        load_assignment: {
          cluster_name: name,
          endpoints: [
            {
              lb_endpoints: [
                { endpoint: { address: { socket_address: { address: jwks.host, port_value: jwks.port } } } },
              ],
            },
          ],
        },
      };
      if (jwks.https)
        cluster.transport_socket = {
          name: 'envoy.transport_sockets.tls',
          typed_config: packAny(TypeName.UpstreamTlsContext, {
            sni: jwks.host,
            common_tls_context: { validation_context: { trusted_ca: { filename: SYSTEM_CA_BUNDLE } } },
          }),
        };
      out.set(name, cluster);
    }
  return new Map([...out.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

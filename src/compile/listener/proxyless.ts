/**
 * Listeners for proxyless gRPC clients (@grpc/grpc-js-xds, grpc-go…; istiod: grpcgen/lds.go).
 * A client dialling `xds:///<host>:<port>` asks for the Listener of exactly that name; it must be
 * an api_listener whose HttpConnectionManager fetches routes over RDS and ends with the router.
 *
 * Only HTTP-family ports get one (their route configs exist). Neither depends on the client
 * namespace: every proxyless client shares one `grpc` group (targets are FQDN `host:port`).
 */
import type { CompileContext } from '../context.js';
import { outboundClusterName, proxylessListenerName } from '../names.js';
import { proxylessClusterNames } from '../route/proxyless-clusters.js';
import { isHttpProtocol } from '../../model/service-model.js';
import { envoy, packAny, type HttpConnectionManager, type Listener } from '../../xds/proto.js';
import { TypeName } from '../../xds/type-urls.js';
import { deepFreeze } from '../intern.js';
import { sortedByName } from '../sorted.js';
import { PROXYLESS_HTTP_FILTERS, socketAddress, type HttpFilter } from './filters.js';

/** RDS over ADS, as istiod's grpcgen: one frozen copy for every listener. */
const ADS_SOURCE = deepFreeze({ ads: {}, resource_api_version: envoy.config.core.v3.ApiVersion.V3 });

export function buildProxylessListeners(ctx: CompileContext): Map<string, Listener> {
  const listeners = new Map<string, Listener>();
  // Only ports whose cluster proxyless clients get (EDS: not headless, ExternalName or PASSTHROUGH).
  const clusters = proxylessClusterNames(ctx);
  for (const service of ctx.model.services) {
    if (service.externalName !== undefined) continue;
    for (const port of service.ports) {
      if (!isHttpProtocol(port.protocol) || !clusters.has(outboundClusterName(port.port, '', service.hostname)))
        continue;
      const name = proxylessListenerName(service.hostname, port.port);
      const hcm: HttpConnectionManager = {
        http_filters: PROXYLESS_HTTP_FILTERS as HttpFilter[],
        rds: { route_config_name: name, config_source: ADS_SOURCE },
      };
      listeners.set(name, {
        name,
        // Informational for gRPC (it never binds); istiod puts the service address here.
        address: socketAddress(service.clusterIP ?? '0.0.0.0', port.port),
        api_listener: { api_listener: packAny(TypeName.HttpConnectionManager, hcm) },
      });
    }
  }
  return sortedByName(listeners);
}

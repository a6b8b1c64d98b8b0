/**
 * istiod's names for gateway resources (pilot/pkg/model/gateway.go gatewayRDSRouteName,
 * core/gateway.go getListenerName).
 */
import { isHttpGatewayProtocol, isPassthroughServer, type Gateway, type GatewayServer } from '../../model/gateway.js';

/**
 * `http.<resolved port>` for HTTP-family servers, `https.<server port>.<port name>.<gateway>.<ns>`
 * for HTTPS servers terminated here (`.<bind>` appended when bound), '' for everything else.
 */
export function gatewayRouteName(server: GatewayServer, resolvedPort: number, gateway: Gateway): string {
  const bind = server.bind ? `.${server.bind}` : '';
  if (isHttpGatewayProtocol(server.port.protocol)) return `http.${resolvedPort}${bind}`;
  if (server.port.protocol === 'HTTPS' && !isPassthroughServer(server))
    return `https.${server.port.number}.${server.port.name}.${gateway.meta.name}.${gateway.meta.namespace}${bind}`;
  return '';
}

/** `0.0.0.0_8080`, or `<bind>_<port>` for a server bound to an address. */
export const gatewayListenerName = (bind: string, port: number): string => `${bind || '0.0.0.0'}_${port}`;

/** Virtual host names are `<host>:<server port>`. */
export const gatewayVirtualHostName = (host: string, port: number): string => `${host}:${port}`;

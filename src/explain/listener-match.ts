/**
 * Which listener takes a connection. A sidecar's iptables rules send outbound TCP to port 15001
 * (Istio's `virtualOutbound`) and inbound TCP to 15006 (`virtualInbound`; other ports when MeshConfig
 * `proxyListenPort` / `proxyInboundListenPort` say so: the listeners are found by name). A listener with
 * `use_original_dst` hands the connection to the listener bound to the original destination
 * (Envoy's docs): first the one at exactly IP:port, then one at the wildcard address and that port;
 * when there is none, it keeps the connection itself (Istio's catch-all chains). A proxy without
 * capture listeners (a gateway, a router) takes connections on the listener bound to the port; a
 * proxyless gRPC client asks for the listener named `host:port` (an `api_listener`). Pure.
 */
import { isLoopback, isWildcardAddress, parseIp } from './ip.js';
import { num, obj, str, type JsonObject } from './json.js';

export const OUTBOUND_CAPTURE_PORT = 15001;
export const INBOUND_CAPTURE_PORT = 15006;

export interface ListenerChoice {
  readonly listener?: JsonObject;
  readonly why: string[];
}

export interface SocketAddress {
  readonly address: string;
  readonly port: number;
}

export function addressOf(listener: JsonObject): SocketAddress | undefined {
  const sa = obj(obj(listener.address)?.socket_address);
  const port = num(sa?.port_value);
  const address = str(sa?.address);
  return address === undefined || port === undefined ? undefined : { address, port };
}

const nameOf = (l: JsonObject): string => str(l.name) ?? '(unnamed)';
const shown = (a: SocketAddress): string => `${a.address}:${a.port}`;

/** The listener bound exactly to ip:port, else at the wildcard address on port (Envoy's lookup order). */
function listenerFor(
  listeners: readonly JsonObject[],
  ip: string | undefined,
  port: number,
  skip?: JsonObject,
): { listener: JsonObject; exact: boolean } | undefined {
  const at = listeners.filter((l) => l !== skip && addressOf(l)?.port === port);
  const exact = ip === undefined ? undefined : at.find((l) => addressOf(l)?.address === ip);
  if (exact) return { listener: exact, exact: true };
  const wildcard = at.find((l) => isWildcardAddress(addressOf(l)?.address ?? ''));
  return wildcard ? { listener: wildcard, exact: false } : undefined;
}

export function matchListener(
  listeners: readonly JsonObject[],
  target: { direction: 'outbound' | 'inbound'; host: string; port: number; destinationIp?: string },
): ListenerChoice {
  const dst = `${target.destinationIp ?? target.host}:${target.port}`;
  const api = listeners.find((l) => l.api_listener !== undefined && str(l.name) === `${target.host}:${target.port}`);
  if (api) return { listener: api, why: [`proxyless gRPC: the client asks for the api_listener named ${nameOf(api)}`] };

  if (listeners.length > 0 && listeners.every((l) => l.api_listener !== undefined))
    return {
      why: [
        `proxyless gRPC: the client asks for the api_listener named ${target.host}:${target.port}, and none is served (use the name the client dials, e.g. the FQDN)`,
      ],
    };
  const capturePort = target.direction === 'outbound' ? OUTBOUND_CAPTURE_PORT : INBOUND_CAPTURE_PORT;
  // Istio's capture listener by name (its port is MeshConfig proxyListenPort / proxyInboundListenPort), else by the default port.
  const captureName = target.direction === 'outbound' ? 'virtualOutbound' : 'virtualInbound';
  const capture =
    listeners.find((l) => str(l.name) === captureName && l.bind_to_port !== false) ??
    listeners.find((l) => addressOf(l)?.port === capturePort && l.bind_to_port !== false);
  if (!capture) {
    const direct = listenerFor(
      listeners.filter((l) => l.bind_to_port !== false),
      target.destinationIp,
      target.port,
    );
    if (!direct) return { why: [`no capture listener on ${capturePort} and no listener bound to port ${target.port}`] };
    return {
      listener: direct.listener,
      why: [
        `no capture listener on ${capturePort}: the connection to ${dst} reaches the listener bound to ${shown(addressOf(direct.listener) as SocketAddress)} (${nameOf(direct.listener)})`,
      ],
    };
  }
  const loopback =
    target.direction === 'outbound' ? loopbackDestination(listeners, target.destinationIp, target.port) : undefined;
  if (loopback) return loopback;
  const why = [
    `${target.direction} traffic is redirected by iptables to port ${capturePort}: listener ${nameOf(capture)}`,
  ];
  if (capture.use_original_dst !== true) {
    why.push(`${nameOf(capture)} has no use_original_dst: it handles the connection to ${dst} itself`);
    return { listener: capture, why };
  }
  const handoff = listenerFor(listeners, target.destinationIp, target.port, capture);
  if (!handoff) {
    why.push(
      `use_original_dst: no listener is bound to the original destination ${dst} nor to the wildcard address on port ${target.port}, so ${nameOf(capture)} keeps the connection`,
    );
    return { listener: capture, why };
  }
  why.push(
    handoff.exact
      ? `use_original_dst: hands the connection to ${nameOf(handoff.listener)}, bound to exactly the original destination ${dst}`
      : `use_original_dst: no listener at exactly ${dst}${target.destinationIp === undefined ? ' (destination IP unknown)' : ''}; hands the connection to ${nameOf(handoff.listener)}, on the wildcard address and port ${target.port}`,
  );
  return { listener: handoff.listener, why };
}

/**
 * Istio's iptables rules leave outbound traffic to a loopback address alone (`-d 127.0.0.1/32 -j
 * RETURN`): it reaches a listener bound to that address and port (a Sidecar egress listener with
 * captureMode NONE), or nothing.
 */
function loopbackDestination(
  listeners: readonly JsonObject[],
  ip: string | undefined,
  port: number,
): ListenerChoice | undefined {
  const parsed = ip === undefined ? undefined : parseIp(ip);
  if (!parsed || !isLoopback(parsed)) return undefined;
  const bound = listeners.find(
    (l) => l.bind_to_port !== false && addressOf(l)?.address === ip && addressOf(l)?.port === port,
  );
  const notCaptured = `iptables does not redirect outbound traffic to the loopback address ${ip}`;
  if (!bound) return { why: [`${notCaptured}, and no listener is bound to ${ip}:${port}`] };
  return {
    listener: bound,
    why: [`${notCaptured}: the connection reaches the listener bound to ${ip}:${port} (${nameOf(bound)})`],
  };
}

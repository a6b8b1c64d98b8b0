/**
 * LDS: the Listeners of sidecars (outbound, shared by all; inbound, per workload shape) and of
 * proxyless gRPC clients. Each kind lives in src/compile/listener/.
 */
import type { Listener } from '../xds/proto.js';
import type { CompileContext } from './context.js';
import { buildEgressListeners } from './listener/egress-listeners.js';
import { buildOutboundListeners as buildCatchAllListeners } from './listener/outbound.js';

export { buildInbound, type InboundShape } from './listener/inbound.js';
export { reportNamedTargetPorts, TARGET_PORT_DIFFERS, UNRESOLVED_TARGET_PORT } from './listener/inbound-ports.js';
export { buildProxylessListeners } from './listener/proxyless.js';
export { buildProxylessServerListeners } from './listener/proxyless-server.js';

/** A view's outbound listeners: per Sidecar egress listener when they have ports or binds, else every port alike. */
export function buildOutboundListeners(ctx: CompileContext): Map<string, Listener> {
  return ctx.egressListeners ? buildEgressListeners(ctx, ctx.egressListeners) : buildCatchAllListeners(ctx);
}

/**
 * LDS: the Listeners of sidecars (outbound, shared by all; inbound, per workload shape) and of
 * proxyless gRPC clients. Each kind lives in src/compile/listener/.
 */
import type { Cluster, Listener } from '../xds/proto.js';
import type { CompileContext } from './context.js';
import { withAccessLogs } from './listener/access-log.js';
import { buildEgressListeners } from './listener/egress-listeners.js';
import { buildInbound as buildInboundSide, type InboundShape } from './listener/inbound.js';
import { buildOutboundListeners as buildCatchAllListeners } from './listener/outbound.js';

export type { InboundShape };
export { reportNamedTargetPorts, TARGET_PORT_DIFFERS, UNRESOLVED_TARGET_PORT } from './listener/inbound-ports.js';
export { buildProxylessListeners } from './listener/proxyless.js';
export { buildProxylessServerListeners } from './listener/proxyless-server.js';

/** A view's outbound listeners: per Sidecar egress listener when they have ports or binds, else every port alike. */
export function buildOutboundListeners(ctx: CompileContext): Map<string, Listener> {
  const listeners = ctx.egressListeners ? buildEgressListeners(ctx, ctx.egressListeners) : buildCatchAllListeners(ctx);
  return withAccessLogs(ctx.mesh.accessLog, listeners);
}

/** A workload shape's inbound side (listener/inbound.ts), with the mesh's access log. */
export function buildInbound(
  ctx: CompileContext,
  shape: InboundShape,
): { listeners: Map<string, Listener>; clusters: Map<string, Cluster> } {
  const built = buildInboundSide(ctx, shape);
  return ctx.mesh.accessLog ? { ...built, listeners: withAccessLogs(ctx.mesh.accessLog, built.listeners) } : built;
}

/**
 * LDS: the Listeners of sidecars (outbound, shared by all; inbound, per workload shape) and of
 * proxyless gRPC clients. Each kind lives in src/compile/listener/.
 */
import type { Cluster, Listener } from '../xds/proto.js';
import type { CompileContext } from './context.js';
import { meshLoggers, withAccessLogs, type Loggers } from './listener/access-log.js';
import type { TelemetryLogMode } from '../model/telemetry.js';
import { hcmHeaders } from './listener/hcm-headers.js';
import { buildEgressListeners } from './listener/egress-listeners.js';
import { buildInbound as buildInboundSide, type InboundShape } from './listener/inbound.js';
import { buildOutboundListeners as buildCatchAllListeners } from './listener/outbound.js';

export type { InboundShape };
export { reportNamedTargetPorts, TARGET_PORT_DIFFERS, UNRESOLVED_TARGET_PORT } from './listener/inbound-ports.js';
export { buildProxylessListeners } from './listener/proxyless.js';
export { buildProxylessServerListeners } from './listener/proxyless-server.js';

/**
 * The access logs of a proxy of `namespace` (undefined: one whose namespace has no Telemetry of its
 * own), selected by the workload Telemetries `workload` (their keys), on listeners of `mode`:
 * Telemetry's (listener/telemetry-logs.ts), else the mesh's file log.
 */
export const accessLoggers = (
  ctx: CompileContext,
  mode: TelemetryLogMode,
  namespace: string | undefined,
  workload?: readonly string[],
): Loggers | undefined =>
  ctx.accessLogs ? ctx.accessLogs.loggers(mode, namespace, workload) : meshLoggers(ctx.mesh.accessLog);

/**
 * A view's outbound listeners: per Sidecar egress listener when they have ports or binds, else
 * every port alike; with the access logs of client (outbound) listeners, as seen from the view's
 * listener namespace. Their HCMs trace as listener/hcm-headers.ts says.
 */
export function buildOutboundListeners(ctx: CompileContext): Map<string, Listener> {
  const listeners = ctx.egressListeners ? buildEgressListeners(ctx, ctx.egressListeners) : buildCatchAllListeners(ctx);
  return withAccessLogs(accessLoggers(ctx, 'CLIENT', ctx.listenerNamespace, ctx.listenerTelemetry), listeners);
}

/**
 * A workload shape's inbound side (listener/inbound.ts), with the access logs of server listeners;
 * its HCMs trace as listener/hcm-headers.ts says for the shape's proxies.
 */
export function buildInbound(
  ctx: CompileContext,
  shape: InboundShape,
): { listeners: Map<string, Listener>; clusters: Map<string, Cluster> } {
  const headers = hcmHeaders(ctx, 'inbound', {
    mode: 'SERVER',
    namespace: shape.namespace,
    workload: shape.telemetry,
    seen: shape.scopeServices ?? ctx.model.byHostname,
  });
  const built = buildInboundSide(ctx, shape, headers);
  const logs = accessLoggers(ctx, 'SERVER', shape.namespace, shape.telemetry);
  return logs ? { ...built, listeners: withAccessLogs(logs, built.listeners) } : built;
}

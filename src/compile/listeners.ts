/**
 * LDS: the Listeners of sidecars (outbound, shared by all; inbound, per workload shape) and of
 * proxyless gRPC clients. Each kind lives in src/compile/listener/.
 */
import type { Cluster, Listener } from '../xds/proto.js';
import type { CompileContext } from './context.js';
import { meshLoggers, withAccessLogs, type Loggers } from './listener/access-log.js';
import type { TelemetryLogMode } from '../model/telemetry.js';
import type { MeshService } from '../model/service-model.js';
import { NOT_TRACED, unseenClusters, withTracing, type HcmTracingChoice } from './listener/telemetry-tracing.js';
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
 * listener namespace.
 */
export function buildOutboundListeners(ctx: CompileContext): Map<string, Listener> {
  const listeners = ctx.egressListeners ? buildEgressListeners(ctx, ctx.egressListeners) : buildCatchAllListeners(ctx);
  const logged = withAccessLogs(accessLoggers(ctx, 'CLIENT', ctx.listenerNamespace, ctx.listenerTelemetry), listeners);
  return withTelemetryTracing(
    ctx,
    'CLIENT',
    ctx.listenerNamespace,
    ctx.listenerTelemetry,
    logged,
    ctx.model.byHostname,
  );
}

/**
 * The listeners with the tracing of istiod's Telemetry path where it applies (a Telemetry traces or
 * the mesh names a default tracing provider: listener/telemetry-tracing.ts); `seen` are the services
 * whose clusters the proxy's CDS holds (a tracer whose collector is not among them: no tracing).
 * For listeners built before the choice is known, a few per view or gateway: their HCMs are spliced.
 * A class's inbound HCMs, one set per class, are built with it (buildInbound).
 */
export function withTelemetryTracing(
  ctx: CompileContext,
  mode: TelemetryLogMode,
  namespace: string | undefined,
  workload: readonly string[] | undefined,
  listeners: Map<string, Listener>,
  seen: ReadonlyMap<string, MeshService>,
  gateway = false,
): Map<string, Listener> {
  const choice = tracingChoice(ctx, mode, namespace, workload, gateway);
  if (!choice) return listeners;
  return withTracing(unseenClusters(choice, seen).length === 0 ? choice : NOT_TRACED, listeners);
}

/** The Telemetry path's tracing of these listeners; undefined: the legacy path's (the builders' own). */
export function tracingChoice(
  ctx: CompileContext,
  mode: TelemetryLogMode,
  namespace: string | undefined,
  workload: readonly string[] | undefined,
  gateway = false,
): HcmTracingChoice | undefined {
  if (!ctx.tracing?.active) return undefined;
  const applicable = ctx.accessLogs?.applicable(namespace, workload) ?? [];
  return ctx.tracing.choice(mode, applicable, ctx.mesh.tracing, gateway);
}

/**
 * A workload shape's inbound side (listener/inbound.ts), with the access logs of server listeners
 * and the Telemetry path's tracing written as its HCMs are built (one HCM per class at 10k services:
 * none is built twice).
 */
export function buildInbound(
  ctx: CompileContext,
  shape: InboundShape,
): { listeners: Map<string, Listener>; clusters: Map<string, Cluster> } {
  const choice = tracingChoice(ctx, 'SERVER', shape.namespace, shape.telemetry);
  const seen = shape.scopeServices ?? ctx.model.byHostname;
  const tracing = choice && unseenClusters(choice, seen).length > 0 ? NOT_TRACED : choice;
  const built = buildInboundSide(ctx, shape, tracing);
  const logs = accessLoggers(ctx, 'SERVER', shape.namespace, shape.telemetry);
  return logs ? { ...built, listeners: withAccessLogs(logs, built.listeners) } : built;
}

/**
 * The proxy headers an HCM is built with: those of its listener class (./proxy-headers.ts) with the
 * tracing istiod's Telemetry path gives the proxy, where that path applies (a Telemetry traces or the
 * mesh names a default tracing provider: ./telemetry-tracing.ts). Every HCM is written once, with its
 * tracing; none is patched after.
 */
import type { TelemetryLogMode } from '../../model/telemetry.js';
import type { MeshService } from '../../model/service-model.js';
import type { CompileContext } from '../context.js';
import { proxyHeaders, type ListenerClass, type ProxyHeaders } from './proxy-headers.js';
import { NOT_TRACED, unseenClusters, type HcmTracingChoice } from './telemetry-tracing.js';

/** The proxies an HCM serves, as the Telemetry path selects them. */
export interface TracedProxies {
  readonly mode: TelemetryLogMode;
  /** Their namespace; undefined: one whose namespace has no Telemetry of its own. */
  readonly namespace: string | undefined;
  /** The workload-selected Telemetries that select them (their keys). */
  readonly workload: readonly string[] | undefined;
  /** The services whose clusters their CDS holds: a tracer whose collector is not among them does not trace. */
  readonly seen: ReadonlyMap<string, MeshService>;
  readonly gateway?: boolean;
}

export function hcmHeaders(ctx: CompileContext, cls: ListenerClass, proxies: TracedProxies): ProxyHeaders {
  const choice = tracingChoice(ctx, proxies.mode, proxies.namespace, proxies.workload, proxies.gateway);
  if (!choice) return proxyHeaders(ctx.mesh, cls);
  return proxyHeaders(ctx.mesh, cls, unseenClusters(choice, proxies.seen).length === 0 ? choice : NOT_TRACED);
}

/**
 * A view's outbound HCMs' headers: its proxies are those of its listener namespace and Telemetries.
 * Asked once per HTTP port and per sniffed bind: the choice is made once per view (a context's
 * fields are read-only).
 */
export function outboundHcmHeaders(ctx: CompileContext): ProxyHeaders {
  let headers = outboundByView.get(ctx);
  if (!headers)
    outboundByView.set(
      ctx,
      (headers = hcmHeaders(ctx, 'outbound', {
        mode: 'CLIENT',
        namespace: ctx.listenerNamespace,
        workload: ctx.listenerTelemetry,
        seen: ctx.model.byHostname,
      })),
    );
  return headers;
}

const outboundByView = new WeakMap<CompileContext, ProxyHeaders>();

/** The Telemetry path's tracing of these proxies' HCMs; undefined: the legacy path's (./tracing.ts). */
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

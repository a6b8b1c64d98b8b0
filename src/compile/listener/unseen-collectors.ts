/**
 * Proxies whose CDS lacks the cluster of their Telemetry tracer's collector (a Sidecar's egress
 * hosts or the collector's exportTo hide its service): their HCMs do not trace
 * (./telemetry-tracing.ts), where istiod would send listeners naming a cluster the proxy lacks,
 * which Envoy rejects. Reported once per namespace and collector, naming the Sidecar that hides it,
 * else the collector's service.
 */
import { objectAt, type Diagnostic } from '../../model/diagnostics.js';
import type { MeshService } from '../../model/service-model.js';
import type { Sidecar } from '../../model/sidecar.js';
import type { TelemetryLogMode } from '../../model/telemetry.js';
import type { CompileContext } from '../context.js';
import { tracingChoice } from './hcm-headers.js';
import { unseenClusters } from './telemetry-tracing.js';

type Seen = ReadonlyMap<string, MeshService>;

export interface UnseenCollectors {
  /** A sidecar class: its inbound (SERVER) and outbound (CLIENT) listeners, with its scope's services. */
  check(
    shape: {
      readonly namespace: string;
      readonly telemetry?: readonly string[];
      readonly sidecar?: Sidecar | undefined;
    },
    seen: Seen,
  ): void;
  /** A gateway class, with its view (its scope's services and its own ProxyConfig). */
  checkRouter(
    view: CompileContext,
    shape: { readonly namespace: string; readonly telemetry?: readonly string[] },
  ): void;
  /** Reports what was found, in a stable order. */
  report(): void;
}

export function unseenCollectors(ctx: CompileContext): UnseenCollectors {
  const found = new Map<string, Omit<Diagnostic, 'severity'>>();
  const check = (
    c: CompileContext,
    mode: TelemetryLogMode,
    listenerNamespace: string | undefined,
    namespace: string,
    workload: readonly string[] | undefined,
    seen: Seen,
    sidecar: Sidecar | undefined,
    gateway: boolean,
  ): void => {
    const choice = tracingChoice(c, mode, listenerNamespace, workload, gateway);
    for (const collector of choice ? unseenClusters(choice, seen) : []) {
      const key = `${namespace}\u0000${collector.hostname}\u0000${collector.port}`;
      if (found.has(key)) continue;
      const svc = ctx.model.byHostname.get(collector.hostname);
      const where = sidecar
        ? objectAt('Sidecar', sidecar, 'spec.egress')
        : svc
          ? objectAt(
              svc.serviceEntry ? 'ServiceEntry' : 'Service',
              { meta: svc, origin: svc.origin },
              svc.serviceEntry ? 'spec.exportTo' : 'metadata.annotations.networking.istio.io/exportTo',
            )
          : {};
      found.set(key, {
        ...where,
        code: 'tracing-not-applied',
        message: `proxies of namespace ${namespace} do not see ${collector.hostname}:${collector.port}, the collector of tracing provider "${choice?.provider ?? ''}": they do not trace (istiod would send them listeners naming a cluster they lack, which Envoy rejects)`,
      });
    }
  };
  return {
    check(shape, seen) {
      const ns = shape.namespace;
      check(ctx, 'SERVER', ns, ns, shape.telemetry, seen, shape.sidecar, false);
      const listenerNamespace = ctx.accessLogs?.ownsListeners(ns) ? ns : undefined;
      check(ctx, 'CLIENT', listenerNamespace, ns, shape.telemetry, seen, shape.sidecar, false);
    },
    checkRouter(view, shape) {
      check(view, 'CLIENT', shape.namespace, shape.namespace, shape.telemetry, view.model.byHostname, undefined, true);
    },
    report() {
      for (const key of [...found.keys()].sort()) ctx.diags.warn(found.get(key) as Omit<Diagnostic, 'severity'>);
    },
  };
}

/**
 * Compile-time checks of VirtualService destinations against the service model, and the cluster
 * a valid destination routes to. A bad destination is reported and dropped rather than sent to
 * Envoy as a cluster that does not exist (which would answer 503).
 */
import { type Diagnostics, objectAt } from '../../model/diagnostics.js';
import type { Destination, VirtualService } from '../../model/istio.js';
import type { MeshService } from '../../model/service-model.js';
import type { CompileContext } from '../context.js';
import { outboundClusterName } from '../names.js';
import { reportOnce } from './report-once.js';
import { isDynamicDns } from '../dynamic-forward-proxy.js';

export interface DestinationProblem {
  readonly code: 'unknown-host' | 'unknown-subset' | 'missing-port' | 'unknown-port';
  readonly message: string;
  /** Sub-field of the destination (`host`, `subset`, `port`). */
  readonly field: 'host' | 'subset' | 'port';
}

/**
 * The service port a destination goes to: its explicit port, or the service's only port; else the
 * port of the listener the route is served on (the caller's fallback, istiod's GetDestinationCluster).
 */
export function destinationPort(dest: Destination, service: MeshService | undefined): number | undefined {
  if (dest.port?.number !== undefined) return dest.port.number;
  if (service && service.ports.length === 1) return service.ports[0]?.port;
  return undefined;
}

/** `outbound|<port>|<subset>|<host>` for a checked destination (host already fully qualified). */
export function destinationCluster(ctx: CompileContext, dest: Destination, fallbackPort: number): string {
  const service = ctx.model.byHostname.get(dest.host);
  return outboundClusterName(destinationPort(dest, service) ?? fallbackPort, dest.subset ?? '', dest.host);
}

export function checkDestination(ctx: CompileContext, dest: Destination): DestinationProblem | undefined {
  const service = ctx.model.byHostname.get(dest.host);
  if (!service) return { code: 'unknown-host', field: 'host', message: `no service ${dest.host} in the mesh` };
  const port = dest.port?.number;
  if (port !== undefined) {
    if (!service.ports.some((p) => p.port === port)) {
      return {
        code: 'unknown-port',
        field: 'port',
        message: `service ${dest.host} has no port ${port} (ports: ${service.ports.map((p) => p.port).join(', ') || 'none'})`,
      };
    }
  }
  if (dest.subset !== undefined) {
    // istiod builds no subset clusters for a DYNAMIC_DNS host (applyDestinationRule): a route to one would name none.
    if (isDynamicDns(service))
      return {
        code: 'unknown-subset',
        field: 'subset',
        message: `${dest.host} has resolution DYNAMIC_DNS, which has no subsets (subset ${dest.subset})`,
      };
    const rule = ctx.destinationRules.lookup(dest.host);
    if (!rule?.spec.subsets?.some((s) => s.name === dest.subset)) {
      return {
        code: 'unknown-subset',
        field: 'subset',
        message: `subset ${dest.subset} of ${dest.host} is not defined by any DestinationRule`,
      };
    }
  }
  return undefined;
}

/**
 * Where a destination names no port and its service has several, it goes to the port the route is
 * served on (istiod's GetDestinationCluster), which the service must then have: istiod would send to
 * a cluster that does not exist (503); meshsnap drops the destination on that port, reported.
 */
export function portProblem(
  ctx: CompileContext,
  dest: Destination,
  listenerPort: number,
): DestinationProblem | undefined {
  if (dest.port?.number !== undefined) return undefined;
  const service = ctx.model.byHostname.get(dest.host);
  if (!service || service.ports.length === 1 || service.ports.some((p) => p.port === listenerPort)) return undefined;
  return {
    code: 'missing-port',
    field: 'port',
    message: `service ${dest.host} has ${service.ports.length} ports and none is ${listenerPort}, the port the route is served on: the destination must name one`,
  };
}

const FIELD_SUFFIX = {
  host: 'destination.host',
  subset: 'destination.subset',
  port: 'destination.port.number',
} as const;

export function reportDestination(
  diags: Diagnostics,
  source: VirtualService,
  path: string,
  problem: DestinationProblem,
): void {
  reportOnce(diags, {
    severity: 'error',
    code: problem.code,
    message: `${problem.message}; the destination is dropped`,
    ...objectAt(source.kind, source, `${path}.${FIELD_SUFFIX[problem.field]}`),
  });
}

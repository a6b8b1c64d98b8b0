/**
 * Which outbound clusters proxyless gRPC clients get: only EDS ones (cluster/grpc.ts leaves out
 * headless, ExternalName and PASSTHROUGH clusters, which grpc-js-xds cannot use). Their listeners,
 * route configs and route destinations must not name any other cluster, or the snapshot is
 * inconsistent.
 */
import type { CompileContext } from '../context.js';
import { planServiceClusters } from '../cluster/plan.js';
import { isHttpProtocol, type MeshService } from '../../model/service-model.js';
import { proxylessListenerName } from '../names.js';
import { perCompile } from '../per-compile.js';

export const proxylessClusterNames = perCompile((ctx): ReadonlySet<string> => {
  const names = new Set<string>();
  for (const service of ctx.model.services)
    for (const plan of planServiceClusters(ctx, service)) if (plan.discovery === 'EDS') names.add(plan.name);
  return names;
});

/** A service port proxyless clients dial: its number and its `host:port` name (listener, route config and virtual host). */
export interface ProxylessPort {
  readonly port: number;
  readonly name: string;
}

const portsByService = perCompile(() => new Map<MeshService, readonly ProxylessPort[]>());

/**
 * The HTTP-family ports of a service whose main cluster proxyless clients get (EDS), in the
 * service's port order (a number given twice is listed twice, as the callers met it before): the
 * same test as `proxylessClusterNames(ctx).has(outboundClusterName(port, '', host))`, read from the
 * service's plans, with each name built once per compile for the listener and the route config.
 */
export function proxylessPorts(ctx: CompileContext, service: MeshService): readonly ProxylessPort[] {
  const byService = portsByService(ctx);
  let ports = byService.get(service);
  if (!ports) {
    const eds = new Set<number>();
    for (const plan of planServiceClusters(ctx, service))
      if (plan.subsetName === '' && plan.discovery === 'EDS') eds.add(plan.port.port);
    const list: ProxylessPort[] = [];
    for (const p of service.ports)
      if (isHttpProtocol(p.protocol) && eds.has(p.port))
        list.push({ port: p.port, name: proxylessListenerName(service.hostname, p.port) });
    byService.set(service, (ports = list));
  }
  return ports;
}

/**
 * Which outbound clusters proxyless gRPC clients get: only EDS ones (cluster/grpc.ts leaves out
 * headless, ExternalName and PASSTHROUGH clusters, which grpc-js-xds cannot use). Their listeners,
 * route configs and route destinations must not name any other cluster, or the snapshot is
 * inconsistent.
 */
import type { CompileContext } from '../context.js';
import { planServiceClusters } from '../cluster/plan.js';

const cache = new WeakMap<CompileContext, ReadonlySet<string>>();

export function proxylessClusterNames(ctx: CompileContext): ReadonlySet<string> {
  let names = cache.get(ctx);
  if (!names) {
    const set = new Set<string>();
    for (const service of ctx.model.services)
      for (const plan of planServiceClusters(ctx, service)) if (plan.discovery === 'EDS') set.add(plan.name);
    cache.set(ctx, (names = set));
  }
  return names;
}

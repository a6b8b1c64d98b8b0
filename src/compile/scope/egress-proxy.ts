/**
 * A Sidecar's `outboundTrafficPolicy.egressProxy`: the cluster ALLOW_ANY sends unknown destinations
 * to instead of PassthroughCluster (istiod: GetDestinationCluster(egressProxy, nil, 0), the host as
 * written, which validation wants fully qualified). istiod names that cluster even when the sidecar
 * has none such, and Envoy then fails the traffic; a snapshot refers only to clusters its classes
 * hold, so such an egress proxy becomes BlackHoleCluster (the same outcome), with a warning.
 */
import { type Diagnostics, objectAt } from '../../model/diagnostics.js';
import type { Sidecar, SidecarOutboundTrafficPolicy } from '../../model/sidecar.js';
import type { CompileContext } from '../context.js';
import { BLACKHOLE_CLUSTER, outboundClusterName } from '../names.js';

type EgressProxy = NonNullable<SidecarOutboundTrafficPolicy['egressProxy']>;

export function egressProxyCluster(
  view: CompileContext,
  sidecar: Sidecar,
  proxy: EgressProxy,
  diags: Diagnostics,
): string {
  const port = proxy.port ?? 0;
  const subset = proxy.subset ?? '';
  const service = view.model.byHostname.get(proxy.host);
  const hasPort = service?.ports.some((p) => p.port === port) ?? false;
  const hasSubset =
    subset === '' || (view.destinationRules.lookup(proxy.host)?.spec.subsets ?? []).some((s) => s.name === subset);
  if (hasPort && hasSubset) return outboundClusterName(port, subset, proxy.host);
  diags.warn({
    ...objectAt('Sidecar', sidecar),
    code: 'unknown-egress-proxy',
    field: 'spec.outboundTrafficPolicy.egressProxy',
    message: `${outboundClusterName(port, subset, proxy.host)} is not a cluster this sidecar sees (${
      !service
        ? 'no visible service of that host'
        : !hasPort
          ? `the service has no port ${port}`
          : `no subset ${subset}`
    }): unknown destinations are blocked (BlackHoleCluster)`,
  });
  return BLACKHOLE_CLUSTER;
}

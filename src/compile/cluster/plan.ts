/**
 * The clusters a service gets, decided once and shared by CDS and EDS so that every EDS cluster
 * has its ClusterLoadAssignment and no other cluster does.
 *
 * Per service port (UDP ports get none, as in istiod): `outbound|<port>||<host>`, plus
 * `outbound|<port>|<subset>|<host>` per subset of the DestinationRule that applies.
 */
import type { CompileContext, DestinationRuleIndex, ResolvedDestinationRule } from '../context.js';
import type { Subset } from '../../model/istio.js';
import type { MeshService, MeshServicePort } from '../../model/service-model.js';
import { flat } from '../../model/flat-string.js';
import { outboundClusterName } from '../names.js';
import type { MeshDefaultTrafficPolicy } from '../../model/mesh-config.js';
import { policyForPort, policyForSubset, withMeshDefaults, type EffectivePolicy } from '../traffic-policy.js';
import { isDynamicDns } from '../dynamic-forward-proxy.js';
import { DYNAMIC_DNS_PROTOCOLS } from '../../model/service-entry.js';

/**
 * EDS: endpoints come from the ClusterLoadAssignment of the same name (ServiceEntry `STATIC` too).
 * ORIGINAL_DST: headless services, ServiceEntry resolution `NONE` and `loadBalancer.simple:
 * PASSTHROUGH` (Envoy connects to the address the app dialled). STRICT_DNS: ExternalName services
 * (meshsnap resolves the external name in Envoy; istiod nowadays treats them as aliases, which
 * needs VirtualService support) and ServiceEntry `DNS`; LOGICAL_DNS: `DNS_ROUND_ROBIN`
 * (istiod's convertResolution). DFP: a wildcard ServiceEntry host with resolution `DYNAMIC_DNS`,
 * Envoy's dynamic forward proxy cluster (no endpoints: the proxy resolves each request's host),
 * for HTTP, TLS, GRPC and HTTP2 ports only and without subset clusters (istiod's
 * buildOutboundClusters and applyDestinationRule).
 */
export type Discovery = 'EDS' | 'ORIGINAL_DST' | 'STRICT_DNS' | 'LOGICAL_DNS' | 'DFP';

export interface PlannedCluster {
  readonly name: string;
  /** `<name>;`, the cluster's alt_stat_name: one string for its sidecar and its proxyless cluster. */
  readonly altStatName: string;
  readonly service: MeshService;
  readonly port: MeshServicePort;
  /** Empty for the main cluster. */
  readonly subsetName: string;
  readonly subset?: Subset;
  /** The rule's policy for the cluster (what proxyless gRPC clients get, as istiod's grpcgen). */
  readonly policy: EffectivePolicy | undefined;
  /** The same with the mesh config's `defaultTrafficPolicy` under it (sidecars and gateways). */
  readonly sidecarPolicy: EffectivePolicy | undefined;
  readonly discovery: Discovery;
  readonly rule?: ResolvedDestinationRule;
}

/**
 * Plans per rule index and service: CDS (sidecar and proxyless), EDS and the proxyless cluster
 * names all ask for them; a plan depends only on the service and the rule the index gives it.
 */
const planned = new WeakMap<DestinationRuleIndex, WeakMap<MeshService, readonly PlannedCluster[]>>();

export function planServiceClusters(ctx: CompileContext, service: MeshService): readonly PlannedCluster[] {
  let byService = planned.get(ctx.destinationRules);
  if (!byService) planned.set(ctx.destinationRules, (byService = new WeakMap()));
  let plans = byService.get(service);
  if (!plans) byService.set(service, (plans = plan(ctx.destinationRules, service, ctx.mesh.defaultTrafficPolicy)));
  return plans;
}

function plan(
  rules: DestinationRuleIndex,
  service: MeshService,
  defaults: MeshDefaultTrafficPolicy | undefined,
): PlannedCluster[] {
  const rule = rules.lookup(service.hostname);
  const out: PlannedCluster[] = [];
  const seen = new Set<string>();
  const dfp = isDynamicDns(service);
  for (const port of service.ports) {
    if (port.protocol === 'UDP') continue;
    if (dfp && !DYNAMIC_DNS_PROTOCOLS.includes(port.protocol)) continue;
    const mainPolicy = policyForPort(rule?.spec.trafficPolicy, port.port);
    const add = (
      subsetName: string,
      subset: Subset | undefined,
      policy: EffectivePolicy | undefined,
      sidecarPolicy: EffectivePolicy | undefined,
    ) => {
      const name = outboundClusterName(port.port, subsetName, service.hostname);
      // Two Service ports with the same number would make equal names: the first wins, as in istiod.
      if (seen.has(name)) return;
      seen.add(name);
      out.push({
        name,
        altStatName: flat(`${name};`),
        service,
        port,
        subsetName,
        ...(subset ? { subset } : {}),
        policy,
        sidecarPolicy,
        discovery: discoveryOf(service, policy),
        ...(rule ? { rule } : {}),
      });
    };
    add('', undefined, mainPolicy, withMeshDefaults(mainPolicy, defaults));
    if (dfp) continue;
    for (const subset of rule?.spec.subsets ?? []) {
      const top = rule?.spec.trafficPolicy;
      const policy = policyForSubset(top, subset.trafficPolicy, port.port);
      add(
        subset.name,
        subset,
        policy,
        defaults ? policyForSubset(top, subset.trafficPolicy, port.port, defaults) : policy,
      );
    }
  }
  return out;
}

function discoveryOf(service: MeshService, policy: EffectivePolicy | undefined): Discovery {
  if (service.externalName !== undefined) return 'STRICT_DNS';
  if (isDynamicDns(service)) return 'DFP';
  const resolution = service.serviceEntry?.resolution;
  if (service.headless || resolution === 'NONE' || policy?.loadBalancer?.simple === 'PASSTHROUGH')
    return 'ORIGINAL_DST';
  if (resolution === 'DNS') return 'STRICT_DNS';
  if (resolution === 'DNS_ROUND_ROBIN') return 'LOGICAL_DNS';
  return 'EDS';
}

/** Endpoints of a service port selected by subset labels (all of them without a subset). */
export function selectsLabels(
  selector: Readonly<Record<string, string>> | undefined,
  labels: Readonly<Record<string, string>>,
): boolean {
  if (!selector) return true;
  for (const k in selector) if (labels[k] !== selector[k]) return false;
  return true;
}

/**
 * Resources whose content depends on the locality of the proxy receiving them (istiod's per-proxy
 * locality load balancing, ./locality-lb.ts): EDS assignments, and DNS clusters' inline endpoints.
 * The translator that builds one records its variants here; scope/locality-groups.ts then moves it
 * into per-locality groups. Whether a resource has variants depends on the locality settings in
 * effect only, never on its endpoints: an endpoint change never moves it between groups.
 */
import { localityKey, type Locality } from '../model/service-model.js';

export { localityKey };
import type { envoy } from '../xds/proto.js';
import {
  effectiveLbSetting,
  localityEndpointsFor,
  type EffectiveLbSetting,
  type WrappedLocality,
} from './locality-lb.js';
import type { CompileContext } from './context.js';
import type { LoadBalancerSettings } from '../model/istio.js';
import type { TrafficDistribution } from '../model/traffic-distribution.js';

type LocalityLbEndpoints = envoy.config.endpoint.v3.LocalityLbEndpoints.$Properties;

/** What a proxy in each locality of the mesh gets, and what a proxy of no known locality gets. */
export interface LocalityVariants<M extends object = object> {
  /** For a proxy whose locality is not one of the mesh's (istiod's result for an empty locality). */
  readonly base: M;
  /** By `region/zone/subzone`, one per `model.proxyLocalities`. */
  readonly byLocality: ReadonlyMap<string, M>;
}

/** The variants of the resources that have any (a view reusing the same object keeps them). */
const variants = new WeakMap<object, LocalityVariants>();

export const variantsOf = <M extends object>(resource: M): LocalityVariants<M> | undefined =>
  variants.get(resource) as LocalityVariants<M> | undefined;

const NO_LOCALITY: Locality = Object.freeze({ region: '', zone: '', subzone: '' });

/** The locality settings of a cluster and whether failover is on (outlier detection), as istiod reads them. */
export interface LocalityPolicy {
  readonly loadBalancer: LoadBalancerSettings | undefined;
  readonly outlierDetection: boolean;
  readonly trafficDistribution: TrafficDistribution | undefined;
}

/**
 * Records the variants of `resource` built from its localities, when the settings in effect make
 * some proxy's differ; `make` builds a resource from a locality list (never called for the
 * resource's own list: the resource itself is that variant). Whether it recorded any.
 */
export function recordLocalityVariants<M extends object>(
  ctx: CompileContext,
  policy: LocalityPolicy,
  resource: M,
  wrapped: readonly WrappedLocality[],
  make: (endpoints: LocalityLbEndpoints[]) => M,
): boolean {
  // A mesh whose proxies are in no known locality gets no variants (every proxy would get the base).
  if (ctx.model.proxyLocalities.length === 0) return false;
  const setting = effectiveLbSetting(ctx.mesh, policy.loadBalancer, policy.trafficDistribution);
  if (!setting || !dependsOnLocality(setting, policy.outlierDetection)) return false;
  // Localities shared by several variants are one object each (locality-lb.ts): equal lists are
  // element by element the same, and their variants one resource (encoded and checked once).
  const made: { readonly list: readonly LocalityLbEndpoints[]; readonly resource: M }[] = [
    { list: wrapped.map((w) => w.lle), resource },
  ];
  const variant = (proxy: Locality): M => {
    const list = localityEndpointsFor(wrapped, setting, policy.outlierDetection, proxy);
    const same = made.find((m) => m.list.length === list.length && m.list.every((l, i) => l === list[i]));
    if (same) return same.resource;
    const fresh = make([...list]);
    made.push({ list, resource: fresh });
    return fresh;
  };
  variants.set(resource, {
    base: variant(NO_LOCALITY),
    byLocality: new Map(ctx.model.proxyLocalities.map((l) => [localityKey(l), variant(l)])),
  });
  return true;
}

/**
 * How a copy of a resource with variants (a gateway's SNI-DNAT cluster and assignment) derives its
 * own: each distinct variant through `derive` once, frozen as the variants it is held with are;
 * `original` itself gives `copy`.
 */
export function deriveVariants<M extends object>(original: M, copy: M, derive: (variant: M) => M): (variant: M) => M {
  const derived = new Map<M, M>([[original, copy]]);
  return (m) => {
    let d = derived.get(m);
    if (!d) derived.set(m, (d = Object.freeze(derive(m))));
    return d;
  };
}

/** Records for `copy` (built from `original`) the locality variants of `original` (deriveVariants); the copy is frozen when it has any. */
export function copyLocalityVariants<M extends object>(original: M, copy: M, derive: (variant: M) => M): M {
  const v = variantsOf(original);
  if (!v) return copy;
  const of = deriveVariants(original, copy, derive);
  variants.set(copy, { base: of(v.base), byLocality: new Map([...v.byLocality].map(([key, m]) => [key, of(m)])) });
  return Object.freeze(copy);
}

function dependsOnLocality(setting: EffectiveLbSetting, outlierDetection: boolean): boolean {
  if (setting.kind === 'zoneAware') return setting.setting.enabled !== false;
  return (setting.setting.distribute?.length ?? 0) > 0 || outlierDetection || setting.force;
}

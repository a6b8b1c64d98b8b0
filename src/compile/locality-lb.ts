/**
 * Locality load balancing of one ClusterLoadAssignment for the proxy that receives it, as
 * istiod's EndpointBuilder applies it (pilot/pkg/networking/core/loadbalancer): the priorities
 * (failover, failoverPriority, zone-aware regional buckets) and weights (distribute) of the
 * assignment's localities depend on the locality of the proxy asking. Pure: the compiler calls it
 * once per proxy locality the mesh has (endpoints.ts), and a proxy gets the variant of its own.
 */
import type { LoadBalancerSettings, LocalityLbSetting, ZoneAwareLbSetting } from '../model/istio.js';
import type { MeshConfig } from '../model/mesh-config.js';
import type { Locality, MeshEndpoint } from '../model/service-model.js';
import type { TrafficDistribution } from '../model/traffic-distribution.js';
import type { envoy } from '../xds/proto.js';

type LocalityLbEndpoints = envoy.config.endpoint.v3.LocalityLbEndpoints.$Properties;
type LbEndpoint = envoy.config.endpoint.v3.LbEndpoint.$Properties;

/** The locality settings in effect for a cluster (istiod's LBSettings), or undefined when none applies. */
export type EffectiveLbSetting =
  | { readonly kind: 'locality'; readonly setting: LocalityLbSetting; readonly force: boolean }
  | { readonly kind: 'zoneAware'; readonly setting: ZoneAwareLbSetting };

/** Istio's default mesh config enables locality load balancing (pkg/config/mesh DefaultMeshConfig). */
const MESH_DEFAULT_LOCALITY: LocalityLbSetting = Object.freeze({ enabled: true });

/** Topology labels istiod adds to proxy and endpoint labels (labelutil.AugmentLabels) that meshsnap derives from a locality. */
const REGION_LABEL = 'topology.kubernetes.io/region';
const ZONE_LABEL = 'topology.kubernetes.io/zone';
const SUBZONE_LABEL = 'topology.istio.io/subzone';
const NETWORK_LABEL = 'topology.istio.io/network';
const CLUSTER_LABEL = 'topology.istio.io/cluster';
/** The node label istiod adds to a proxy's labels (its NODE_NAME) and an endpoint's (its pod's `spec.nodeName`). */
const HOSTNAME_LABEL = 'kubernetes.io/hostname';

/**
 * A service's traffic distribution as istiod turns it into locality settings (forced failover,
 * without outlier detection): same network, region, zone first; PreferSameNode also same subzone
 * and node (`kubernetes.io/hostname`: the assignment then has a variant per node, endpoints.ts).
 */
const PREFER_SAME_ZONE: LocalityLbSetting = Object.freeze({
  enabled: true,
  failoverPriority: Object.freeze([NETWORK_LABEL, REGION_LABEL, ZONE_LABEL]),
});
const PREFER_SAME_NODE: LocalityLbSetting = Object.freeze({
  enabled: true,
  failoverPriority: Object.freeze([NETWORK_LABEL, REGION_LABEL, ZONE_LABEL, SUBZONE_LABEL, HOSTNAME_LABEL]),
});

/** Whether the settings in effect are a PreferSameNode traffic distribution's (priorities that depend on the proxy's node). */
export const isPreferSameNode = (setting: EffectiveLbSetting | undefined): boolean =>
  setting?.kind === 'locality' && setting.setting === PREFER_SAME_NODE;

/**
 * istiod's GetEffectiveLbSetting: the rule's zone-aware setting, else its locality setting (none
 * when disabled), else the service's traffic distribution, else the mesh's (zone-aware first; the
 * locality one defaults to enabled).
 */
export function effectiveLbSetting(
  mesh: Pick<MeshConfig, 'localityLbSetting' | 'zoneAwareLbSetting'>,
  rule: LoadBalancerSettings | undefined,
  trafficDistribution?: TrafficDistribution,
): EffectiveLbSetting | undefined {
  if (rule?.zoneAwareLbSetting) return { kind: 'zoneAware', setting: rule.zoneAwareLbSetting };
  if (rule?.localityLbSetting)
    return rule.localityLbSetting.enabled === false
      ? undefined
      : { kind: 'locality', setting: rule.localityLbSetting, force: false };
  if (trafficDistribution)
    return {
      kind: 'locality',
      setting: trafficDistribution === 'PreferSameNode' ? PREFER_SAME_NODE : PREFER_SAME_ZONE,
      force: true,
    };
  if (mesh.zoneAwareLbSetting) return { kind: 'zoneAware', setting: mesh.zoneAwareLbSetting };
  const meshLocality = mesh.localityLbSetting ?? MESH_DEFAULT_LOCALITY;
  return meshLocality.enabled === false ? undefined : { kind: 'locality', setting: meshLocality, force: false };
}

/** One locality of an assignment as built for every proxy, with the endpoints behind its LbEndpoints (aligned). */
export interface WrappedLocality {
  readonly lle: LocalityLbEndpoints;
  readonly members: readonly MeshEndpoint[];
}

/**
 * Whether meshsnap can apply a failoverPriority label: a `label=value` override (the proxy's value
 * is given), or a label whose proxy value follows from the proxy's locality (region, zone,
 * subzone), the one cluster (`topology.istio.io/cluster`) or the one network meshsnap compiles for.
 * Any other label is read from the proxy's own labels, which proxy classes do not split on.
 */
export function failoverPriorityLabelSupported(entry: string): boolean {
  const { key, value } = priorityLabel(entry);
  if (value !== undefined) return true;
  return [REGION_LABEL, ZONE_LABEL, SUBZONE_LABEL, NETWORK_LABEL, CLUSTER_LABEL].includes(key);
}

/**
 * istiod's priorityLabelOverrides: `label=value` names the proxy's value; an entry splitting into
 * other than two parts on `=` is the label before the first `=`, valued as the proxy's.
 */
function priorityLabel(entry: string): { key: string; value: string | undefined } {
  const parts = entry.split('=');
  return { key: parts[0] as string, value: parts.length === 2 ? parts[1] : undefined };
}

/** The value of a topology label for a proxy of this locality on `node` ('' none), in the mesh's one network and cluster. */
function proxyLabel(label: string, proxy: Locality, node: string): string | undefined {
  switch (label) {
    case HOSTNAME_LABEL:
      return node || undefined;
    case REGION_LABEL:
      return proxy.region || undefined;
    case ZONE_LABEL:
      return proxy.zone || undefined;
    case SUBZONE_LABEL:
      return proxy.subzone || undefined;
    case CLUSTER_LABEL:
      return 'Kubernetes';
    default:
      return undefined; // the network label: the proxy is in the default (unnamed) network
  }
}

/** An endpoint's label as istiod augments it (topology labels from its locality, network, cluster). */
function endpointLabel(label: string, ep: MeshEndpoint): string | undefined {
  switch (label) {
    case REGION_LABEL:
      return ep.locality.region || undefined;
    case ZONE_LABEL:
      return ep.locality.zone || undefined;
    case SUBZONE_LABEL:
      return ep.locality.subzone || undefined;
    case NETWORK_LABEL:
      return ep.network || undefined;
    case CLUSTER_LABEL:
      return 'Kubernetes';
    case HOSTNAME_LABEL:
      // Set only where it matters (a PreferSameNode Service's endpoints: model/build.ts).
      return ep.nodeName ?? ep.labels[label];
    default:
      return ep.labels[label];
  }
}

/**
 * The assignment's localities for a proxy at `proxy` on Kubernetes node `node` ('' none: no
 * NODE_NAME) (istiod's ApplyToLoadAssignment), or the base list itself when nothing changes.
 * `enableFailover`: the cluster's rule has outlier detection. Never mutates `base`; unchanged
 * LocalityLbEndpoints are returned as they are. The node matters to PreferSameNode only.
 */
export function localityEndpointsFor(
  base: readonly WrappedLocality[],
  setting: EffectiveLbSetting,
  enableFailover: boolean,
  proxy: Locality,
  node = '',
): readonly LocalityLbEndpoints[] {
  let out: Draft[] = base.map((w) => ({ lle: w.lle, members: w.members, priority: 0 }));
  if (setting.kind === 'zoneAware') {
    if (setting.setting.enabled === false) return base.map((w) => w.lle);
    const labels = supportedLabels(setting.setting.failoverPriority);
    if (labels.length) out = applyFailoverPriorities(out, proxy, node, labels);
    applyRegionalBuckets(out, proxy, setting.setting.failover ?? []);
  } else {
    const s = setting.setting;
    if (s.distribute?.length) applyLocalityWeights(out, proxy, s.distribute);
    else if (enableFailover || setting.force) {
      // A traffic distribution's labels (forced) are all applied; a rule's only when meshsnap can.
      const labels = setting.force ? (s.failoverPriority ?? []) : supportedLabels(s.failoverPriority);
      if (labels.length) {
        out = applyFailoverPriorities(out, proxy, node, labels);
        if (s.failover?.length) applyLocalityFailover(out, proxy, s.failover);
      } else applyLocalityFailover(out, proxy, s.failover ?? []);
    }
  }
  return out.map(finish);
}

interface Draft {
  lle: LocalityLbEndpoints;
  members: readonly MeshEndpoint[];
  priority: number;
  /** Set when distribute changed the locality's weight or emptied it. */
  weight?: number;
  emptied?: boolean;
}

/**
 * A locality at another priority, one object per (locality, priority): the variants of an
 * assignment for proxies of different localities mostly share them (the encoder and the Envoy
 * check do their work once per object).
 */
const reprioritized = new WeakMap<LocalityLbEndpoints, Map<number, LocalityLbEndpoints>>();

function finish(d: Draft): LocalityLbEndpoints {
  const samePriority = (d.lle.priority ?? 0) === d.priority;
  if (samePriority && d.weight === undefined && !d.emptied) return d.lle;
  if (d.weight === undefined && !d.emptied) {
    let byPriority = reprioritized.get(d.lle);
    if (!byPriority) reprioritized.set(d.lle, (byPriority = new Map()));
    let hit = byPriority.get(d.priority);
    if (!hit) {
      const made: LocalityLbEndpoints = { ...d.lle };
      if (d.priority) made.priority = d.priority;
      else delete made.priority;
      byPriority.set(d.priority, (hit = Object.freeze(made)));
    }
    return hit;
  }
  const out: LocalityLbEndpoints = { ...d.lle };
  if (d.priority) out.priority = d.priority;
  else delete out.priority;
  if (d.weight !== undefined) out.load_balancing_weight = { value: d.weight };
  if (d.emptied) out.lb_endpoints = [];
  return Object.freeze(out);
}

const supportedLabels = (labels: readonly string[] | undefined): readonly string[] =>
  labels?.length && labels.every(failoverPriorityLabelSupported) ? labels : [];

/** istiod's LbPriority: 0 same subzone, 1 same zone, 2 same region, 3 otherwise. */
function lbPriority(proxy: Locality, ep: envoy.config.core.v3.Locality.$Properties | null | undefined): number {
  if (proxy.region !== (ep?.region ?? '')) return 3;
  if (proxy.zone !== (ep?.zone ?? '')) return 2;
  return proxy.subzone !== (ep?.sub_zone ?? '') ? 1 : 0;
}

/** Priorities renumbered 0..n-1 in their order, as Envoy requires them contiguous. */
function compact(out: Draft[]): void {
  const present = [...new Set(out.map((d) => d.priority))].sort((a, b) => a - b);
  for (const d of out) d.priority = present.indexOf(d.priority);
}

/** istiod's applyLocalityFailover: region/zone/subzone distance, `failover` rules for other regions (5 slots per earlier priority). */
function applyLocalityFailover(
  out: Draft[],
  proxy: Locality,
  failover: readonly { readonly from: string; readonly to: string }[],
): void {
  for (const d of out) {
    let priority = lbPriority(proxy, d.lle.locality);
    if (priority === 3) {
      const rule = failover.find((f) => f.from === proxy.region);
      if (rule && (d.lle.locality?.region ?? '') !== rule.to) priority = 4;
    }
    d.priority = d.priority * 5 + priority;
  }
  compact(out);
}

/** istiod's applyZoneAwareRegionalFailover: the proxy's region first, then `failover` targets, then the rest (3 slots). */
function applyRegionalBuckets(
  out: Draft[],
  proxy: Locality,
  failover: readonly { readonly from: string; readonly to: string }[],
): void {
  for (const d of out) {
    const region = d.lle.locality?.region ?? '';
    let priority = 0;
    if (region !== proxy.region) {
      priority = 2;
      const rule = failover.find((f) => f.from === proxy.region);
      if (rule && region === rule.to) priority = 1;
    }
    d.priority = d.priority * 3 + priority;
  }
  compact(out);
}

/**
 * istiod's applyFailoverPriorities: each locality split by how many leading labels its endpoints
 * share with the proxy (a leading network label that differs is skipped, ranking below every match).
 */
function applyFailoverPriorities(out: Draft[], proxy: Locality, node: string, entries: readonly string[]): Draft[] {
  const labels = entries.map((e) => {
    const { key, value } = priorityLabel(e);
    return { key, value: value ?? proxyLabel(key, proxy, node) };
  });
  const lowest = labels.length;
  // As istiod: the entry itself, so an overridden `network=value` first is an ordinary label.
  const includesNetwork = entries[0] === NETWORK_LABEL;
  const split: Draft[] = [];
  for (const d of out) {
    const byPriority = new Map<number, number[]>();
    d.members.forEach((ep, i) => {
      let priority = 0;
      let adjust = 0;
      for (let j = 0; j < labels.length; j++) {
        const { key, value } = labels[j] as { key: string; value: string | undefined };
        if ((value ?? '') === (endpointLabel(key, ep) ?? '')) continue;
        if (j === 0 && includesNetwork) {
          adjust = lowest;
          continue;
        }
        priority = lowest - j;
        break;
      }
      priority += adjust;
      const at = byPriority.get(priority);
      if (at) at.push(i);
      else byPriority.set(priority, [i]);
    });
    for (const priority of [...byPriority.keys()].sort((a, b) => a - b)) {
      const indexes = byPriority.get(priority) as number[];
      const lbs = d.lle.lb_endpoints ?? [];
      const lb_endpoints = indexes.map((i) => lbs[i] as LbEndpoint);
      let weight = 0;
      for (const e of lb_endpoints) weight += e.load_balancing_weight?.value ?? 0;
      split.push({
        lle: { ...d.lle, lb_endpoints, load_balancing_weight: { value: weight } },
        members: indexes.map((i) => d.members[i] as MeshEndpoint),
        priority,
        weight,
      });
    }
  }
  compact(split);
  return split;
}

/** istiod's LocalityMatch: a `region/zone/subzone` rule, each part possibly `*` (zone and subzone also empty). */
export function localityMatches(locality: Locality, rule: string): boolean {
  const [region = '', zone = '', subzone = ''] = rule.split('/');
  return (
    (region === '*' || locality.region === region) &&
    (zone === '*' || zone === '' || locality.zone === zone) &&
    (subzone === '*' || subzone === '' || locality.subzone === subzone)
  );
}

const asLocality = (l: envoy.config.core.v3.Locality.$Properties | null | undefined): Locality => ({
  region: l?.region ?? '',
  zone: l?.zone ?? '',
  subzone: l?.sub_zone ?? '',
});

/**
 * istiod's applyLocalityWeights: the first `distribute` rule whose `from` matches the proxy
 * splits each `to` weight over the localities it matches (by their own weights, rounded up);
 * localities no `to` matches lose their endpoints. `to` keys are taken in sorted order (istiod
 * iterates a Go map: with overlapping wildcards its choice is random).
 */
function applyLocalityWeights(
  out: Draft[],
  proxy: Locality,
  distribute: readonly { readonly from: string; readonly to: Readonly<Record<string, number>> }[],
): void {
  const rule = distribute.find((r) => localityMatches(proxy, r.from));
  if (!rule) return;
  const unmatched = new Set(out.keys());
  for (const key of Object.keys(rule.to).sort()) {
    const share = rule.to[key] as number;
    const matched: [number, number][] = [];
    let total = 0;
    for (const i of unmatched) {
      const d = out[i] as Draft;
      if (!localityMatches(asLocality(d.lle.locality), key)) continue;
      const own = d.lle.load_balancing_weight?.value ?? 1;
      matched.push([i, own]);
      total += own;
    }
    for (const [i, own] of matched) {
      unmatched.delete(i);
      const weight = (own * share) / total;
      if (weight > 0) (out[i] as Draft).weight = Math.ceil(weight);
    }
  }
  for (const i of unmatched) (out[i] as Draft).emptied = true;
}

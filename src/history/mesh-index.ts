/**
 * A mesh summary (mesh-summary.ts) kept up to date delta by delta, so that the watcher's publish
 * guard costs what a round changed, not what the mesh holds: the index remembers which groups
 * hold each cluster and ClusterLoadAssignment name, and a delta's summary is its base's summary
 * with only the names the delta touched looked at again (an endpoint-only delta recounts only the
 * touched assignments).
 */
import type { ContentStep } from '../snapshot/build.js';
import type { ObjectReader } from '../snapshot/composite.js';
import type { SnapshotContent } from '../snapshot/content.js';
import { EndpointCounter, namespaceOfHost, serviceOfCluster, sumOf, type MeshSummary } from './mesh-summary.js';
import { OverlayMap } from './overlay-map.js';

/** A group's id: the keys of SnapshotContent.groups. */
type GroupId = keyof SnapshotContent['groups'];

/** A ClusterLoadAssignment's digest in one group. */
interface GroupDigest {
  readonly group: GroupId;
  readonly digest: string;
}

export class MeshIndex {
  private constructor(
    /** The snapshot the index describes now. */
    private at: { readonly digest: string; readonly summary: MeshSummary },
    /** Cluster name → the groups that hold it (a few: an array, not a Set, costs less kept per name). */
    private readonly clusterGroups: Map<string, GroupId[]>,
    /** ClusterLoadAssignment name → its digest in each group that holds it (most: one group). */
    private readonly endpointGroups: Map<string, GroupDigest[]>,
    /** Service host → how many distinct cluster names name it. */
    private readonly hostClusters: Map<string, number>,
  ) {}

  get digest(): string {
    return this.at.digest;
  }

  get summary(): MeshSummary {
    return this.at.summary;
  }

  /** The index of a whole snapshot (O(resources): done once, then deltas advance it). */
  static async of(
    digest: string,
    content: SnapshotContent,
    read: ObjectReader,
    counter: EndpointCounter,
  ): Promise<MeshIndex> {
    const clusterGroups = new Map<string, GroupId[]>();
    const endpointGroups = new Map<string, GroupDigest[]>();
    // Pushed while indexing (a name every group holds would cost one copy per group, quadratic:
    // at 10k services ~460 MB of garbage in the first publish), then copied to their length.
    for (const [id, group] of Object.entries(content.groups)) {
      for (const name of Object.keys(group.clusters)) pushTo(clusterGroups, name, id);
      for (const [name, d] of Object.entries(group.endpoints)) pushTo(endpointGroups, name, { group: id, digest: d });
    }
    toExactLengths(clusterGroups);
    toExactLengths(endpointGroups);
    const hostClusters = new Map<string, number>();
    const services = new Map<string, string>();
    for (const name of clusterGroups.keys()) {
      const host = serviceOfCluster(name);
      if (host === undefined) continue;
      hostClusters.set(host, (hostClusters.get(host) ?? 0) + 1);
      services.set(host, namespaceOfHost(host));
    }
    const endpoints = new Map<string, number>();
    for (const [name, byGroup] of endpointGroups)
      endpoints.set(name, await counter.count(firstGroupDigest(byGroup), read));
    const summary: MeshSummary = {
      classes: content.classes.length,
      services,
      clusters: new Set(clusterGroups.keys()),
      endpoints,
      lbEndpoints: sumOf(endpoints),
    };
    return new MeshIndex({ digest, summary }, clusterGroups, endpointGroups, hostClusters);
  }

  /**
   * Whether `advance` can take this delta: it applies to the snapshot the index describes. A group
   * added or removed (a class coming or going) is no exception: its resources are among the step's
   * changes (removed ones with no digest), and the class count comes with the step.
   */
  canAdvance(base: string | undefined, step: ContentStep | undefined): step is ContentStep {
    return step !== undefined && base === this.at.digest;
  }

  /**
   * Moves the index to the snapshot `digest` that `step` made from the current one; returns its
   * summary (new maps where something changed, sharing what did not: the previous summary stays
   * as it was). A throw leaves the index unusable: the caller drops it.
   */
  async advance(digest: string, step: ContentStep, read: ObjectReader, counter: EndpointCounter): Promise<MeshSummary> {
    const prev = this.at.summary;
    const touchedClusters = new Set<string>();
    const touchedEndpoints = new Set<string>();
    for (const ch of step.changes) {
      if (ch.type === 'clusters') {
        const had = this.clusterGroups.get(ch.name) ?? [];
        const others = withoutAt(had, had.indexOf(ch.group));
        setOrDelete(this.clusterGroups, ch.name, ch.digest === undefined ? others : withAdded(others, ch.group));
        touchedClusters.add(ch.name);
      } else if (ch.type === 'endpoints') {
        const had = this.endpointGroups.get(ch.name) ?? [];
        const others = withoutAt(
          had,
          had.findIndex((g) => g.group === ch.group),
        );
        const next = ch.digest === undefined ? others : withAdded(others, { group: ch.group, digest: ch.digest });
        setOrDelete(this.endpointGroups, ch.name, next);
        touchedEndpoints.add(ch.name);
      }
    }
    const { clusters, services } = this.clustersAfter(prev, touchedClusters);
    const updates = new Map<string, number | undefined>();
    let lbEndpoints = prev.lbEndpoints;
    for (const name of touchedEndpoints) {
      const byGroup = this.endpointGroups.get(name);
      const count = byGroup ? await counter.count(firstGroupDigest(byGroup), read) : undefined;
      lbEndpoints += (count ?? 0) - (prev.endpoints.get(name) ?? 0);
      updates.set(name, count);
    }
    const summary: MeshSummary = {
      classes: step.classes ? step.classes.classes.length : prev.classes,
      services,
      clusters,
      // A copy that shares the untouched entries (O(change), not O(assignments)).
      endpoints: updates.size === 0 ? prev.endpoints : OverlayMap.updated(prev.endpoints, updates),
      lbEndpoints,
    };
    this.at = { digest, summary };
    return summary;
  }

  /** The cluster and service sets after the touched cluster names changed (the previous ones when none appeared or vanished). */
  private clustersAfter(prev: MeshSummary, touched: ReadonlySet<string>): Pick<MeshSummary, 'clusters' | 'services'> {
    const appeared = [...touched].filter((name) => this.clusterGroups.has(name) && !prev.clusters.has(name));
    const vanished = [...touched].filter((name) => !this.clusterGroups.has(name) && prev.clusters.has(name));
    if (appeared.length === 0 && vanished.length === 0) return { clusters: prev.clusters, services: prev.services };
    const clusters = new Set(prev.clusters);
    const services = new Map(prev.services);
    for (const name of appeared) {
      clusters.add(name);
      const host = serviceOfCluster(name);
      if (host === undefined) continue;
      this.hostClusters.set(host, (this.hostClusters.get(host) ?? 0) + 1);
      services.set(host, namespaceOfHost(host));
    }
    for (const name of vanished) {
      clusters.delete(name);
      const host = serviceOfCluster(name);
      if (host === undefined) continue;
      const left = (this.hostClusters.get(host) ?? 1) - 1;
      if (left > 0) this.hostClusters.set(host, left);
      else {
        this.hostClusters.delete(host);
        services.delete(host);
      }
    }
    return { clusters, services };
  }
}

// The index's arrays are replaced, never grown in place: a pushed array keeps spare capacity.
const withAdded = <T>(list: readonly T[] | undefined, item: T): T[] => (list ? list.concat([item]) : [item]);
const withoutAt = <T>(list: readonly T[], at: number): T[] =>
  at < 0 ? (list as T[]) : list.slice(0, at).concat(list.slice(at + 1));

function pushTo<T>(map: Map<string, T[]>, key: string, item: T): void {
  const list = map.get(key);
  if (list) list.push(item);
  else map.set(key, [item]);
}

/** Each list copied to its length (pushTo leaves spare capacity: the index keeps these lists). */
function toExactLengths<T>(map: Map<string, T[]>): void {
  for (const [key, list] of map) if (list.length > 1) map.set(key, list.slice());
}

function setOrDelete<T>(map: Map<string, T[]>, key: string, list: T[]): void {
  if (list.length > 0) map.set(key, list);
  else map.delete(key);
}

/** The assignment's digest in the first group by id (the one `summarize` counts: groups are in id order). */
function firstGroupDigest(byGroup: readonly GroupDigest[]): string {
  let first = byGroup[0] as GroupDigest;
  for (const g of byGroup) if (g.group < first.group) first = g;
  return first.digest;
}

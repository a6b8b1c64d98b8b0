/**
 * What a snapshot serves, in the terms an operator counts in: proxy classes, services (from
 * outbound cluster names), clusters, and endpoints per ClusterLoadAssignment (LbEndpoints summed).
 * The publish guard (guard.ts) compares two of these; rollback checks the endpoints it would drop.
 */
import { resourceBytes, type ObjectReader } from '../snapshot/composite.js';
import type { BuiltSnapshot, SnapshotCounts } from '../snapshot/build.js';
import type { SnapshotContent } from '../snapshot/content.js';
import { countLbEndpoints } from '../xds/wire/scan.js';
import { HistoryError } from './errors.js';

export interface MeshSummary {
  readonly classes: number;
  /** Service host (`reviews.default.svc.cluster.local`) → its namespace. */
  readonly services: ReadonlyMap<string, string>;
  readonly clusters: ReadonlySet<string>;
  /** ClusterLoadAssignment name → its LbEndpoints. */
  readonly endpoints: ReadonlyMap<string, number>;
  /** The sum of `endpoints` (kept, so a delta's summary need not add them all up again). */
  readonly lbEndpoints: number;
}

/** Endpoints (LbEndpoints summed) and endpoint sets (ClusterLoadAssignments): the counts shown to operators. */
export interface EndpointCounts {
  readonly endpoints: number;
  readonly endpointSets: number;
}

/** A record's counts as operators read them: endpoints (null on records from before they were counted) beside endpoint sets. */
export function shownCounts(c: SnapshotCounts): {
  clusters: number;
  endpoints: number | null;
  endpointSets: number;
  listeners: number;
  routes: number;
} {
  return {
    clusters: c.clusters,
    endpoints: c.lbEndpoints ?? null,
    endpointSets: c.endpoints,
    listeners: c.listeners,
    routes: c.routes,
  };
}

/** countedSnapshot's results, per snapshot. */
const countsOf = new WeakMap<BuiltSnapshot, SnapshotCounts>();

/**
 * The snapshot's counts with `lbEndpoints`, for its version record. Computed once per snapshot
 * (`meshsnap compile` shows them, then its publish records them): they follow from its content,
 * and `read` only finds bytes the snapshot does not hold.
 */
export async function countedSnapshot(
  snapshot: BuiltSnapshot,
  read: ObjectReader,
  counter = processEndpointCounter,
): Promise<SnapshotCounts> {
  const known = countsOf.get(snapshot);
  if (known) return known;
  const counts = withLbEndpoints(
    snapshot.counts,
    await summarize(snapshot.content, async (d) => snapshot.objects.get(d) ?? read(d), counter),
  );
  countsOf.set(snapshot, counts);
  return counts;
}

export const withLbEndpoints = (counts: SnapshotCounts, summary: MeshSummary): SnapshotCounts => ({
  ...counts,
  lbEndpoints: endpointCounts(summary).endpoints,
});

export const endpointCounts = (summary: MeshSummary): EndpointCounts => ({
  endpoints: summary.lbEndpoints,
  endpointSets: summary.endpoints.size,
});

/** The LbEndpoints of every assignment, summed. */
export function sumOf(endpoints: ReadonlyMap<string, number>): number {
  let n = 0;
  for (const e of endpoints.values()) n += e;
  return n;
}

/** `outbound|9080|v1|reviews.default.svc.cluster.local` → `reviews.default.svc.cluster.local`. */
export function serviceOfCluster(name: string): string | undefined {
  const parts = name.split('|');
  return parts.length === 4 && parts[0] === 'outbound' && parts[3] !== '' ? parts[3] : undefined;
}

/** `reviews.default.svc.cluster.local` → `default`. */
export const namespaceOfHost = (host: string): string => host.split('.')[1] ?? '';

/**
 * LbEndpoints per ClusterLoadAssignment digest. Objects are content-addressed, so a count never
 * goes stale: a long-lived counter (the watcher's) decodes only assignments it has not seen.
 */
export class EndpointCounter {
  private readonly byDigest = new Map<string, number>();
  constructor(private readonly maxEntries = 200_000) {}

  async count(digest: string, read: ObjectReader): Promise<number> {
    const known = this.byDigest.get(digest);
    if (known !== undefined) return known;
    const bytes = await resourceBytes(read, digest);
    if (!bytes) throw new HistoryError(`endpoint object ${digest} is missing from the store`);
    const n = countLbEndpoints(bytes);
    if (this.byDigest.size >= this.maxEntries) this.byDigest.clear();
    this.byDigest.set(digest, n);
    return n;
  }
}

/**
 * The process's counter: the CLI counts a new snapshot's endpoints for its output line, for the
 * version record and for the publish guard, and each would otherwise read and scan every
 * ClusterLoadAssignment again (~22k at 10k services, read back from the build's spool).
 */
export const processEndpointCounter = new EndpointCounter();

export async function summarize(
  content: SnapshotContent,
  read: ObjectReader,
  counter = processEndpointCounter,
): Promise<MeshSummary> {
  const services = new Map<string, string>();
  const clusters = new Set<string>();
  const endpoints = new Map<string, number>();
  for (const group of Object.values(content.groups)) {
    for (const name of Object.keys(group.clusters)) {
      clusters.add(name);
      const host = serviceOfCluster(name);
      if (host !== undefined) services.set(host, namespaceOfHost(host));
    }
    for (const [name, digest] of Object.entries(group.endpoints)) {
      if (!endpoints.has(name)) endpoints.set(name, await counter.count(digest, read));
    }
  }
  return { classes: content.classes.length, services, clusters, endpoints, lbEndpoints: sumOf(endpoints) };
}

/**
 * The publish guard: a mistake (an empty folder, a YAML typo, a lost RBAC rule) must never empty a
 * mesh. Compares what a new snapshot would serve with what the channel serves now; a snapshot with
 * no proxy classes, or one that loses more than `maxShrinkPercent` of the served services,
 * clusters or endpoints, or every service of a namespace, is refused (and recorded as a candidate
 * by the caller, see guarded-publish.ts). The first version of a channel is exempt. Pure.
 */
import { endpointCounts, serviceOfCluster, type MeshSummary } from './mesh-summary.js';

export interface GuardPolicy {
  /** Refuse losing more than this percentage (0–100) of services, clusters or endpoints. */
  readonly maxShrinkPercent: number;
}

export const DEFAULT_GUARD_POLICY: GuardPolicy = { maxShrinkPercent: 50 };

export interface GuardVerdict {
  readonly allowed: boolean;
  /** Why it was refused, one sentence each; empty when allowed. */
  readonly problems: readonly string[];
  /** Served services the new snapshot lacks (sorted), and namespaces it loses entirely. */
  readonly lostServices: readonly string[];
  readonly lostNamespaces: readonly string[];
}

const SHOWN = 10;

const listed = (names: readonly string[]): string =>
  names.length <= SHOWN ? names.join(', ') : `${names.slice(0, SHOWN).join(', ')} and ${names.length - SHOWN} more`;

const lostFrom = <T>(served: Iterable<T>, next: { has(x: T): boolean }): T[] => [...served].filter((x) => !next.has(x));

/** A shrink from `before` to `after` (as a percentage of `before`) above the policy's limit. */
const tooMuch = (before: number, after: number, policy: GuardPolicy): boolean =>
  before > 0 && ((before - after) * 100) / before > policy.maxShrinkPercent;

export function checkShrink(
  served: MeshSummary | undefined,
  next: MeshSummary,
  policy: GuardPolicy = DEFAULT_GUARD_POLICY,
): GuardVerdict {
  if (!served) return { allowed: true, problems: [], lostServices: [], lostNamespaces: [] };
  // A delta's summary shares the sets it did not change (mesh-index.ts): nothing lost there, and
  // nothing to walk, so an endpoint-only round is checked in O(change).
  const sameServices = served.services === next.services;
  const lostServices = sameServices ? [] : lostFrom(served.services.keys(), next.services).sort();
  const lostNamespaces = sameServices
    ? []
    : [...new Set(lostFrom(served.services.values(), new Set(next.services.values())))].sort();

  const problems: string[] = [];
  if (next.classes === 0)
    problems.push(
      `it has no proxy classes (no services compiled: an empty or unreadable input?); the channel serves ${served.classes}`,
    );
  if (tooMuch(served.services.size, served.services.size - lostServices.length, policy)) {
    problems.push(
      `it loses ${lostServices.length} of ${served.services.size} services (more than ${policy.maxShrinkPercent} %): ${listed(lostServices)}`,
    );
  }
  const lostClusters = served.clusters === next.clusters ? 0 : lostFrom(served.clusters, next.clusters).length;
  if (tooMuch(served.clusters.size, served.clusters.size - lostClusters, policy)) {
    problems.push(
      `it loses ${lostClusters} of ${served.clusters.size} clusters (more than ${policy.maxShrinkPercent} %)`,
    );
  }
  const before = endpointCounts(served).endpoints;
  const after = endpointCounts(next).endpoints;
  if (tooMuch(before, after, policy))
    problems.push(
      `it serves ${after} endpoints where ${before} are served now (more than ${policy.maxShrinkPercent} % fewer)`,
    );
  if (lostNamespaces.length > 0) problems.push(`it loses every service of namespace(s) ${listed(lostNamespaces)}`);
  return { allowed: problems.length === 0, problems, lostServices, lostNamespaces };
}

/** Clusters that have endpoints in `served` and none (or no assignment) in `next`, with their services. */
export function emptiedClusters(
  served: MeshSummary,
  next: MeshSummary,
): { readonly clusters: readonly string[]; readonly services: readonly string[] } {
  const clusters = [...served.endpoints]
    .filter(([name, n]) => n > 0 && next.clusters.has(name) && (next.endpoints.get(name) ?? 0) === 0)
    .map(([name]) => name)
    .sort();
  const services = [...new Set(clusters.map((c) => serviceOfCluster(c) ?? c))].sort();
  return { clusters, services };
}

export function parseShrinkPercent(text: string): number | undefined {
  if (!/^[0-9]+(\.[0-9]+)?$/.test(text)) return undefined;
  const n = Number(text);
  return n >= 0 && n <= 100 ? n : undefined;
}

/**
 * Provenance: which objects changed since the parent version. Changes accumulate until a version
 * is published (a compile that gives the current snapshot again publishes nothing, so its
 * changes belong to the next version), and fold per object relative to the parent:
 * added+modified = added, added+deleted = nothing, deleted+added = modified.
 */
import type { ProvenanceChange, VersionProvenance, LastKnownGoodSubstitution } from '../snapshot/manifest.js';
import { keyString, type ObjectKey } from '../snapshot/stored-inputs/index.js';

/** Above this many entries a version lists the first ones and counts the rest (a relist of a big cluster). */
export const MAX_PROVENANCE_ENTRIES = 1000;

export class ChangeLog {
  private readonly sinceParent = new Map<string, ProvenanceChange>();

  record(
    key: ObjectKey,
    change: ProvenanceChange['change'],
    resourceVersion: string | undefined,
    manager?: string,
  ): void {
    const k = keyString(key);
    const prev = this.sinceParent.get(k);
    let folded: ProvenanceChange['change'] | null = change;
    if (prev) {
      if (prev.change === 'added') folded = change === 'deleted' ? null : 'added';
      else if (prev.change === 'deleted') folded = change === 'deleted' ? 'deleted' : 'modified';
      else folded = change === 'deleted' ? 'deleted' : 'modified';
    }
    if (folded === null) {
      this.sinceParent.delete(k);
      return;
    }
    this.sinceParent.set(k, {
      kind: key.kind,
      namespace: key.namespace,
      name: key.name,
      ...(resourceVersion !== undefined ? { resourceVersion } : {}),
      change: folded,
      ...(manager !== undefined && folded !== 'deleted' ? { manager } : {}),
    });
  }

  get size(): number {
    return this.sinceParent.size;
  }

  /** The provenance a version published now would record. */
  provenance(lastKnownGood: readonly LastKnownGoodSubstitution[] = []): VersionProvenance {
    const keys = [...this.sinceParent.keys()].sort();
    const changes = keys.slice(0, MAX_PROVENANCE_ENTRIES).map((k) => this.sinceParent.get(k) as ProvenanceChange);
    return {
      changes,
      ...(keys.length > MAX_PROVENANCE_ENTRIES ? { truncated: keys.length - MAX_PROVENANCE_ENTRIES } : {}),
      ...(lastKnownGood.length > 0 ? { lastKnownGood } : {}),
    };
  }

  /** After a publish: the next version's changes start from here. */
  clear(): void {
    this.sinceParent.clear();
  }
}

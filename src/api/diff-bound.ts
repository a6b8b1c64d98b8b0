/**
 * A bound on a diff answer, so two large versions never produce a body too large to build (a JSON
 * string over V8's limit was a 500 "Invalid string length"). Resources (added, removed, changed,
 * per class and type) and input changes are listed in order until `limit` entries or `maxBytes` of
 * JSON are reached; the rest are counted, not listed, and the answer says `truncated: true`.
 */
import type { ClassDiff, InputChange, TypeDiff, VersionDiff } from '../history/diff/index.js';
import type { XdsType } from '../xds/type-urls.js';

export const DIFF_LIMIT_DEFAULT = 1000;
export const DIFF_LIMIT_MAX = 10_000;
export const DIFF_MAX_BYTES = 16 * 1024 * 1024;

export interface DiffBound {
  /** Most entries listed: resource names (added, removed, changed) and input changes. */
  readonly limit: number;
  /** Most bytes of JSON listed, about (the entries' own JSON). */
  readonly maxBytes: number;
}

export interface BoundedDiff {
  readonly diff: VersionDiff;
  readonly truncated: boolean;
  /** What was left out; all zero when not truncated. */
  readonly omitted: { readonly resources: number; readonly inputs: number };
}

/** Lists entries while both budgets last; counts the rest. */
class Budget {
  private entries = 0;
  private bytes = 0;
  omitted = 0;
  constructor(private readonly bound: DiffBound) {}

  take<T>(items: readonly T[]): T[] {
    const kept: T[] = [];
    for (const item of items) {
      if (this.omitted === 0 && this.fits(item)) kept.push(item);
      else this.omitted++;
    }
    return kept;
  }

  private fits(item: unknown): boolean {
    if (this.entries >= this.bound.limit) return false;
    const size = typeof item === 'string' ? item.length + 3 : JSON.stringify(item).length + 1;
    if (this.bytes + size > this.bound.maxBytes) return false;
    this.entries++;
    this.bytes += size;
    return true;
  }
}

export function boundDiff(diff: VersionDiff, bound: DiffBound): BoundedDiff {
  const budget = new Budget(bound);
  const classes: ClassDiff[] = [];
  for (const cls of diff.classes) {
    const types: Partial<Record<XdsType, TypeDiff>> = {};
    for (const [type, t] of Object.entries(cls.types) as [XdsType, TypeDiff][]) {
      const kept = { added: budget.take(t.added), removed: budget.take(t.removed), changed: budget.take(t.changed) };
      if (kept.added.length + kept.removed.length + kept.changed.length > 0) types[type] = kept;
    }
    if (Object.keys(types).length > 0) classes.push({ ...cls, types });
  }
  const resources = budget.omitted;
  let inputs: InputChange[] | undefined;
  if (diff.inputs) inputs = budget.take(diff.inputs);
  const omitted = { resources, inputs: budget.omitted - resources };
  const truncated = budget.omitted > 0;
  return { diff: { ...diff, classes, ...(inputs ? { inputs } : {}) }, truncated, omitted };
}

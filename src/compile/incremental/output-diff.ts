/**
 * The difference between the incremental compiler's tables and a newly compiled output, as a
 * CompileDelta plus the groups that went away and the classes and selectors when they changed.
 *
 * A config change (a VirtualService, a DestinationRule, a Service) is compiled in full, but what
 * goes to the snapshot builder is only what changed: most of the output is encoded the same (a
 * weight change rewrites one route configuration), and a delta costs the builder the changed
 * resources where a full build re-encodes and re-checks them all.
 */
import { XDS_TYPES } from '../../xds/type-urls.js';
import { emptyTable, type CompileDelta, type CompileOutput, type GroupId, type ResourceTable } from '../types.js';
import { DeltaBuilder, type LayoutChange } from './delta.js';

export interface OutputDiff {
  readonly delta: CompileDelta;
  readonly layout: LayoutChange;
}

/**
 * The delta from `previous` (tables of the output `before`) to `next`. `previous` is edited into
 * `next`'s tables as it goes (DeltaBuilder), and groups gone from `next` are dropped from it.
 */
export function diffOutputs(
  previous: Map<GroupId, ResourceTable>,
  before: Pick<CompileOutput, 'classes' | 'selectors'>,
  next: CompileOutput,
): OutputDiff {
  const builder = new DeltaBuilder(previous);
  const removedGroups = [...previous.keys()].filter((id) => !next.groups.has(id));
  for (const id of removedGroups) previous.delete(id);
  for (const [id, table] of next.groups) {
    if (!previous.has(id)) previous.set(id, emptyTable());
    for (const type of XDS_TYPES) builder.replaceAll(id, type, table[type]);
  }
  const layout: { -readonly [K in keyof LayoutChange]: LayoutChange[K] } = {};
  if (removedGroups.length > 0) layout.removedGroups = removedGroups;
  if (!sameJson(before.classes, next.classes)) layout.classes = next.classes;
  if (!sameJson(before.selectors, next.selectors)) layout.selectors = next.selectors;
  return { delta: builder.delta, layout };
}

/** Classes and selectors are plain data built in a fixed order: equal values serialize the same. */
const sameJson = (a: unknown, b: unknown): boolean => a === b || JSON.stringify(a) === JSON.stringify(b);

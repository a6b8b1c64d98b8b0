/**
 * A full build's changes: the output's tables compared with the builder's copy, message objects
 * by identity, so unchanged tables cost a comparison, not a re-serialization (the commit encodes
 * what changed). The expanded content
 * (group → type → name → digest) is kept as columns and built only when read.
 */
import type { CompileOutput, GroupId, ResourceTable } from '../../compile/types.js';
import { XDS_TYPES, type XdsType } from '../../xds/type-urls.js';
import { SNAPSHOT_SCHEMA, type GroupDigests, type SnapshotContent } from '../content.js';
import { newGroupState, type Groups, type GroupState, type TableChanges } from './groups.js';
import { LazyContent } from './lazy-content.js';
import type { SnapshotBuildInfo } from './types.js';

/** A type's names, sorted, and their digests, position by position. */
export interface DigestColumns {
  readonly names: readonly string[];
  readonly digests: readonly string[];
}

/** Per group (in id order), per type: the output's names and digests. */
export type ContentColumns = ReadonlyMap<GroupId, Readonly<Record<XdsType, DigestColumns>>>;

/**
 * Brings the tables in `groups` to the output's (new groups are created, removed ones kept until
 * committed) and returns the changes, with each group's names in the output (its content, whose
 * digests `fillDigests` reads from the trees once the changes are committed).
 */
export function diffOutput(
  groups: Groups,
  output: CompileOutput,
): TableChanges & { readonly content: ContentColumns; readonly unchanged: number } {
  const changes: TableChanges['changes'] = [];
  const removed: GroupId[] = [];
  const added: GroupId[] = [];
  const content = new Map<GroupId, Record<XdsType, DigestColumns>>();
  let unchanged = 0;
  for (const id of [...groups.keys()]) if (!output.groups.has(id)) removed.push(id);
  for (const id of removed) {
    const gone = (groups.get(id) as GroupState).table;
    for (const type of XDS_TYPES)
      for (const [name, before] of gone[type] as Map<string, object>)
        changes.push({ group: id, type, name, before, after: undefined });
  }
  for (const id of [...output.groups.keys()].sort()) {
    const next = output.groups.get(id) as ResourceTable;
    let state = groups.get(id);
    if (!state) {
      added.push(id);
      groups.set(id, (state = newGroupState()));
    }
    const columns = {} as Record<XdsType, DigestColumns>;
    for (const type of XDS_TYPES) {
      const mine = state.table[type] as Map<string, object>;
      const theirs = next[type] as ReadonlyMap<string, object>;
      const names = [...theirs.keys()].sort();
      const fresh = mine.size === 0; // a new group's, or a first build's: nothing to compare with
      for (const name of names) {
        const after = theirs.get(name) as object;
        const before = fresh ? undefined : mine.get(name);
        if (before !== after) {
          mine.set(name, after);
          changes.push({ group: id, type, name, before, after });
        } else unchanged++;
      }
      if (mine.size !== theirs.size) {
        for (const [name, before] of mine) {
          if (theirs.has(name)) continue;
          mine.delete(name);
          changes.push({ group: id, type, name, before, after: undefined });
        }
      }
      columns[type] = { names, digests: new Array<string>(names.length) };
    }
    content.set(id, columns);
  }
  return { changes, removed, added, content, unchanged };
}

/** Fills the content's digests from the committed trees, name by name. */
export function fillDigests(groups: Groups, content: ContentColumns): void {
  for (const [id, byType] of content) {
    const { trees } = groups.get(id) as GroupState;
    for (const type of XDS_TYPES) {
      const { names, digests } = byType[type];
      const tree = trees[type];
      for (let i = 0; i < names.length; i++) (digests as string[])[i] = tree?.get(names[i] as string) as string;
    }
  }
}

/** The expanded content's groups from its columns (each table's names in order). */
export function contentGroups(columns: ContentColumns): Record<GroupId, GroupDigests> {
  const groups: Record<GroupId, GroupDigests> = {};
  for (const [id, byType] of columns) {
    const group = {} as Record<XdsType, Record<string, string>>;
    for (const type of XDS_TYPES) {
      const { names, digests } = byType[type];
      const table: Record<string, string> = {};
      for (let i = 0; i < names.length; i++) table[names[i] as string] = digests[i] as string;
      group[type] = table;
    }
    groups[id] = group;
  }
  return groups;
}

/** A full build's snapshot content, expanded when first read (a watcher publishing deltas may never read it). */
export function lazyFullContent(
  info: SnapshotBuildInfo,
  columns: ContentColumns,
  classes: SnapshotContent['classes'],
  selectors: SnapshotContent['selectors'],
): LazyContent {
  const { compiler, inputsDigest } = info;
  return LazyContent.computed(() => ({
    schema: SNAPSHOT_SCHEMA,
    compiler,
    inputsDigest,
    groups: contentGroups(columns),
    classes,
    selectors,
  }));
}

/**
 * A full build's changes: the output's tables compared with the builder's copy, message objects
 * by identity, so unchanged tables cost a comparison, not a re-serialization.
 */
import type { CompileOutput, GroupId, ResourceTable } from '../../compile/types.js';
import { XDS_TYPES, type XdsType } from '../../xds/type-urls.js';
import type { GroupDigests } from '../content.js';
import type { ResourceEncoder } from '../encoder.js';
import { newGroupState, type Groups, type GroupState, type TableChanges } from './groups.js';

/**
 * Brings the tables in `groups` to the output's (new groups are created, removed ones kept until
 * committed) and returns the changes, with each group's digests in the output (its content).
 */
export function diffOutput(
  groups: Groups,
  output: CompileOutput,
  encoder: ResourceEncoder,
): TableChanges & { readonly content: Record<GroupId, GroupDigests> } {
  const changes: TableChanges['changes'] = [];
  const removed: GroupId[] = [];
  const added: GroupId[] = [];
  const content: Record<GroupId, GroupDigests> = {};
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
    const digests = {} as Record<XdsType, Record<string, string>>;
    for (const type of XDS_TYPES) {
      const mine = state.table[type] as Map<string, object>;
      const theirs = next[type] as ReadonlyMap<string, object>;
      const tree = state.trees[type];
      const byName: Record<string, string> = {};
      for (const name of [...theirs.keys()].sort()) {
        const after = theirs.get(name) as object;
        const before = mine.get(name);
        if (before !== after) {
          mine.set(name, after);
          changes.push({ group: id, type, name, before, after });
          byName[name] = encoder.encode(type, after).digest;
        } else byName[name] = tree.get(name) as string;
      }
      if (mine.size !== theirs.size) {
        for (const [name, before] of mine) {
          if (theirs.has(name)) continue;
          mine.delete(name);
          changes.push({ group: id, type, name, before, after: undefined });
        }
      }
      digests[type] = byName;
    }
    content[id] = digests;
  }
  return { changes, removed, added, content };
}

/** A delta applied to the builder's tables, with an undo log to restore them when it is refused. */
import type { GroupId } from '../../compile/types.js';
import { XDS_TYPES } from '../../xds/type-urls.js';
import { newGroupState, type Groups, type TableChanges } from './groups.js';
import type { SnapshotDelta, TypeDelta } from './types.js';

/**
 * Applies `delta` to the tables in `groups` (groups it removes are kept until committed) and
 * returns the changes, and `undo` to restore the tables as they were.
 */
export function applyToTables(groups: Groups, delta: SnapshotDelta): TableChanges & { undo(): void } {
  const changes: TableChanges['changes'] = [];
  const removed: GroupId[] = [];
  const added: GroupId[] = [];
  const log: (() => void)[] = [];
  for (const id of Object.keys(delta).sort()) {
    const groupDelta = delta[id];
    let state = groups.get(id);
    if (groupDelta === null || groupDelta === undefined) {
      if (!state) continue;
      for (const type of XDS_TYPES)
        for (const [name, before] of state.table[type] as Map<string, object>)
          changes.push({ group: id, type, name, before, after: undefined });
      removed.push(id);
      continue;
    }
    if (!state) {
      groups.set(id, (state = newGroupState()));
      log.push(() => groups.delete(id));
      added.push(id);
    }
    for (const type of XDS_TYPES) {
      const typeDelta = groupDelta[type] as TypeDelta<object> | undefined;
      if (!typeDelta) continue;
      const map = state.table[type] as Map<string, object>;
      for (const name of typeDelta.deletes ?? []) {
        const before = map.get(name);
        if (before === undefined) continue;
        map.delete(name);
        log.push(() => map.set(name, before));
        changes.push({ group: id, type, name, before, after: undefined });
      }
      for (const [name, after] of typeDelta.upserts ?? []) {
        const before = map.get(name);
        if (before === after) continue;
        map.set(name, after);
        log.push(() => (before === undefined ? map.delete(name) : map.set(name, before)));
        changes.push({ group: id, type, name, before, after });
      }
    }
  }
  const undo = (): void => {
    for (let i = log.length - 1; i >= 0; i--) (log[i] as () => void)();
  };
  return { changes, removed, added, undo };
}

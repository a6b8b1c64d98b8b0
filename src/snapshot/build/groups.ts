/** The builder's copy of each group: its resource tables, their trees and its group document. */
import type { GroupId, ResourceTable } from '../../compile/types.js';
import { emptyTable } from '../../compile/types.js';
import type { ResourceChange } from '../consistency.js';
import type { XdsType } from '../../xds/type-urls.js';
import { TableTree, type TreeDocument } from '../tree.js';

export interface GroupState {
  readonly table: ResourceTable;
  readonly trees: Record<XdsType, TableTree>;
  doc?: { readonly text: string; readonly doc: TreeDocument };
}

export type Groups = Map<GroupId, GroupState>;

/** What changed in the tables: removed groups are still in Groups, to be dropped after the commit. */
export interface TableChanges {
  readonly changes: ResourceChange[];
  readonly removed: GroupId[];
  readonly added: GroupId[];
}

export const newGroupState = (): GroupState => ({
  table: emptyTable(),
  trees: { clusters: new TableTree(), endpoints: new TableTree(), listeners: new TableTree(), routes: new TableTree() },
});

export function tablesOf(groups: ReadonlyMap<GroupId, { readonly table: ResourceTable }>): Map<GroupId, ResourceTable> {
  const out = new Map<GroupId, ResourceTable>();
  for (const [id, state] of groups) out.set(id, state.table);
  return out;
}

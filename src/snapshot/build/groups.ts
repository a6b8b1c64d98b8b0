/** The builder's copy of each group: its resource tables, their trees and its group document. */
import type { GroupId, ResourceTable } from '../../compile/types.js';
import { emptyTable } from '../../compile/types.js';
import type { ResourceChange } from '../consistency.js';
import type { XdsType } from '../../xds/type-urls.js';
import type { TableTree } from '../tree.js';

export interface GroupState {
  readonly table: ResourceTable;
  /** A type's tree once it held an entry (most groups lack some types: an empty table has the trees' shared empty one). */
  readonly trees: { [T in XdsType]?: TableTree };
  /** The group document as its text and digest: its bytes are made again only for a full build's listing (trees.ts). */
  doc?: { readonly text: string; readonly digest: string };
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
  trees: {},
});

export function tablesOf(groups: ReadonlyMap<GroupId, { readonly table: ResourceTable }>): Map<GroupId, ResourceTable> {
  const out = new Map<GroupId, ResourceTable>();
  for (const [id, state] of groups) out.set(id, state.table);
  return out;
}

/**
 * One table of a group (name → digest) as the relay serves it: its resources sorted by name, and
 * the text `typeVersionOf` hashes for them (`name \0 digest \n` each), built once per table object.
 * A class's map of a type is then a merge of its tables' sorted lists, and its version is hashed
 * from runs of those texts: no per-class sort, pool lookup or per-entry hash call, and the same map
 * order and the same version as typeVersionOf over the merged map.
 */
import { createHash } from 'node:crypto';
import type { ExpandedTable } from '../../snapshot/content.js';
import type { ServedResource } from '../types.js';

export interface SortedTable {
  /** By name, ascending (as `<` compares). */
  readonly list: readonly ServedResource[];
  /** `${name}\0${digest}\n` of every entry, in list order, UTF-8. */
  readonly text: Buffer;
  /** Where entry i's text starts in `text`; one more offset at the end. */
  readonly offsets: Uint32Array;
}

export function sortTable(
  table: ExpandedTable,
  resource: (name: string, digest: string) => ServedResource,
): SortedTable {
  const names = Object.keys(table).sort();
  const list = names.map((name) => resource(name, table[name] as string));
  const lines = list.map((r) => `${r.name}\0${r.digest}\n`);
  const offsets = new Uint32Array(list.length + 1);
  for (let i = 0; i < lines.length; i++)
    offsets[i + 1] = (offsets[i] as number) + Buffer.byteLength(lines[i] as string);
  return { list, text: Buffer.from(lines.join(''), 'utf8'), offsets };
}

/**
 * The tables merged by name, a name in several taken from the last table that has it (as a Map
 * built from them in order keeps the last), with its version: the first 16 hex digits of the
 * SHA-256 of every kept entry's text in name order (typeVersionOf's bytes).
 */
export function mergeTables(tables: readonly SortedTable[]): {
  readonly resources: Map<string, ServedResource>;
  readonly version: string;
} {
  const resources = new Map<string, ServedResource>();
  const hash = createHash('sha256');
  const at = tables.map(() => 0);
  // The current run: consecutive kept entries of one table, hashed with one call.
  let runTable = -1;
  let runStart = 0;
  let runEnd = 0;
  const flush = (): void => {
    if (runTable < 0) return;
    const t = tables[runTable] as SortedTable;
    hash.update(t.text.subarray(t.offsets[runStart], t.offsets[runEnd]));
    runTable = -1;
  };
  for (;;) {
    // The smallest name at the tables' heads; on a tie the last table's entry.
    let pick = -1;
    let name = '';
    for (let i = 0; i < tables.length; i++) {
      const r = (tables[i] as SortedTable).list[at[i] as number];
      if (r && (pick < 0 || r.name <= name)) {
        pick = i;
        name = r.name;
      }
    }
    if (pick < 0) break;
    // Entries of the same name in earlier tables are dropped (and end their runs).
    for (let i = 0; i < pick; i++) {
      if ((tables[i] as SortedTable).list[at[i] as number]?.name !== name) continue;
      if (runTable === i) flush();
      at[i] = (at[i] as number) + 1;
    }
    const index = at[pick] as number;
    if (runTable !== pick || runEnd !== index) {
      flush();
      runTable = pick;
      runStart = index;
    }
    runEnd = index + 1;
    resources.set(name, (tables[pick] as SortedTable).list[index] as ServedResource);
    at[pick] = index + 1;
  }
  flush();
  return { resources, version: hash.digest('hex').slice(0, 16) };
}

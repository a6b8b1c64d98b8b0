/**
 * Are the stored bytes of a version intact? Every document and object it references (snapshot
 * tables, resources and their composite parts, packs, diagnostics, the inputs tree and objects)
 * is read back and hashed again: content addressing means a stored item whose bytes do not hash
 * to its name is corrupt, whatever the digests in the records say.
 */
import { digestOf, type Hasher } from '../snapshot/digest.js';
import type { VersionRecord } from '../snapshot/manifest.js';
import type { SnapshotStore } from '../snapshot/store/store.js';
import { markRecord } from './gc.js';

/** Problems found, one line each (`object sha256:… is corrupt …`); empty when every item is intact. */
export async function storedIntegrityProblems(
  store: SnapshotStore,
  record: VersionRecord,
  hasher?: Hasher,
): Promise<string[]> {
  const docs = new Set<string>();
  const objects = new Set<string>();
  const problems: string[] = [];
  try {
    await markRecord(store, record, docs, objects);
  } catch (err) {
    problems.push(`cannot walk the stored version: ${(err as Error).message}`);
  }
  // A v1 inputs manifest is one object, a v2 one a document: its digest is marked as both.
  const either = record.inputs;
  // What is stored, not what this process already holds: a pack loaded earlier answers from memory.
  const stored = store.uncached?.() ?? store;
  for (const [what, digests, read] of [
    ['document', docs, (d: string) => stored.getDocument(d)],
    ['object', objects, (d: string) => stored.getObject(d)],
  ] as const) {
    for (const d of [...digests].sort()) {
      let bytes: Uint8Array | null;
      try {
        bytes = await read(d);
      } catch (err) {
        problems.push(`${what} ${d} cannot be read: ${(err as Error).message}`);
        continue;
      }
      if (!bytes) {
        if (d !== either) problems.push(`${what} ${d} is missing`);
        continue;
      }
      const actual = digestOf(bytes, hasher);
      if (actual !== d) problems.push(`${what} ${d} is corrupt (its stored bytes hash to ${actual})`);
    }
  }
  return problems;
}

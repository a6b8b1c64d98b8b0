/**
 * A big publish's stored inputs (a watcher's round, `meshsnap compile` of a whole mesh) ride in its
 * version's pack instead of one loose key each (~60k files at 10k services in a full build, tens
 * for one change): the record names the pack, and every store finds the entries through it
 * (pack-index.ts), digest-checked. packs.ts keeps the invariant: a checkpoint holds every input,
 * a delta what its base's inputs lack. This module works out that delta.
 */
import type { VersionRecord } from '../snapshot/manifest.js';
import type { PackedEntries, PackInputs } from '../snapshot/store/packs.js';
import type { SnapshotStore } from '../snapshot/store/store.js';
import { readStoredInputsIndex, type BuiltInputs } from '../snapshot/stored-inputs/index.js';

export interface RoundInputs {
  /** What the round would write: the tree's last commit, or every entry. */
  readonly toWrite: BuiltInputs;
  /** Stored inputs whose entries, with `toWrite` and loose ones, are every entry of the round's (see publish.ts). */
  readonly base?: string;
  /** Every entry of the round's inputs. */
  readonly all: () => BuiltInputs;
}

/** The round's inputs as pack contents over whichever base record the packs are written on. */
export function packInputs(store: Pick<SnapshotStore, 'getObject' | 'getDocument'>, round: RoundInputs): PackInputs {
  return {
    all: round.all,
    added: (base) => addedOver(store, round, base),
  };
}

async function addedOver(
  store: Pick<SnapshotStore, 'getObject' | 'getDocument'>,
  round: RoundInputs,
  base: VersionRecord,
): Promise<PackedEntries> {
  if (base.inputs === undefined) return round.all();
  // The usual case: the base record is the one this watcher wrote last.
  if (round.base === base.inputs) return round.toWrite;
  // Another publisher moved the head, or a restart over other state: leave out what the base holds.
  const held = new Set<string>();
  try {
    const index = await readStoredInputsIndex(
      {
        getObject: (d) => store.getObject(d),
        getDocument: (d) => {
          held.add(d);
          return store.getDocument(d);
        },
      },
      base.inputs,
    );
    for (const layer of Object.values(index)) for (const d of layer.values()) held.add(d);
  } catch {
    return round.all(); // unreadable base inputs: carry everything
  }
  const all = round.all();
  return {
    objects: new Map([...all.objects].filter(([d]) => !held.has(d))),
    documents: all.documents.filter((d) => !held.has(d.digest)),
  };
}

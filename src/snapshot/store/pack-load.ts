/**
 * The cold start's read side of packs (packs.ts): a version's snapshot from ≤ MAX_PACKS reads.
 */
import { isComposite, materialize } from '../composite.js';
import { readSnapshotTrees, type ExpandedTrees, type SnapshotContent } from '../content.js';
import { nobleSha256Hex, type Hasher } from '../digest.js';
import type { VersionRecord } from '../manifest.js';
import { XDS_TYPES } from '../../xds/type-urls.js';
import { forEachLimited } from './concurrent.js';
import { decodePack, InvalidPackError } from './pack-format.js';
import { packRefs } from './pack-policy.js';
import type { ContentReader } from './store.js';

export interface PackedLoad {
  readonly content: SnapshotContent;
  /** What reading its tree expanded (readSnapshotTrees): the next load reuses it. */
  readonly trees: ExpandedTrees;
  /** Every object the snapshot's tables name, verified, composites materialized (the resources' protobuf bytes). */
  readonly objects: Map<string, Uint8Array>;
  /** Store reads made: packs, and single documents/objects not found in them (0 when the packs are complete). */
  readonly packReads: number;
  readonly fallbackReads: number;
}

/**
 * Loads a version's snapshot from its packs: ≤ MAX_PACKS reads whatever its size. Anything the
 * packs lack (a record written before packs, a pack gc removed) is read one by one instead.
 */
export async function loadSnapshotPacked(
  store: Pick<ContentReader, 'getObject' | 'getDocument'>,
  record: Pick<VersionRecord, 'digest' | 'packs'>,
  hasher: Hasher = nobleSha256Hex,
): Promise<PackedLoad | null> {
  const have = new Map<string, Uint8Array>();
  let packReads = 0;
  let fallbackReads = 0;
  if (record.packs) {
    const packs = await Promise.all(
      packRefs(record.packs).map(async (ref) => {
        packReads++;
        const bytes = await store.getObject(ref.digest);
        return bytes ? decodePack(bytes, hasher) : null;
      }),
    );
    for (const m of packs) if (m) for (const [d, b] of m) have.set(d, b);
  }
  const read = (d: string): Promise<Uint8Array | null> | Uint8Array => {
    const b = have.get(d);
    if (b) return b;
    fallbackReads++;
    return store.getDocument(d);
  };
  const tree = await readSnapshotTrees(async (d) => read(d), record.digest);
  if (!tree) return null;
  const { content, trees } = tree;
  const objects = new Map<string, Uint8Array>();
  const missing: string[] = [];
  for (const group of Object.values(content.groups)) {
    for (const type of XDS_TYPES) {
      for (const d of Object.values(group[type])) {
        if (objects.has(d)) continue;
        const b = have.get(d);
        if (b) objects.set(d, b);
        else missing.push(d);
      }
    }
  }
  await forEachLimited([...new Set(missing)], 32, async (d) => {
    fallbackReads++;
    const b = await store.getObject(d);
    if (!b) throw new InvalidPackError(`object ${d} is missing from the store`);
    objects.set(d, b);
  });
  const readPart = async (d: string): Promise<Uint8Array | null> => {
    const b = have.get(d);
    if (b) return b;
    fallbackReads++;
    return store.getObject(d);
  };
  for (const [d, b] of objects) if (isComposite(b)) objects.set(d, await materialize(readPart, d, b));
  return { content, trees, objects, packReads, fallbackReads };
}

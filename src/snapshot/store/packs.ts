/**
 * Packs: a bounded relay cold start.
 *
 * A snapshot is thousands of small documents and objects; reading them one by one from S3 costs
 * one request each. So every published version also writes one **pack**: the documents and
 * objects that are new in this version (an index plus their bytes, concatenated), stored
 * content-addressed as an object. The version record lists the packs that together hold its whole
 * snapshot: a **checkpoint** (every document and object of some earlier version) and the **delta**
 * packs written since. A cold start reads the head, the version record and those ≤ MAX_PACKS
 * packs, and nothing else (loadSnapshotPacked).
 *
 * Why storage stays O(change): a delta pack holds only what the version added. Deltas are merged
 * like a binary counter (the newest is merged into the one before while it is at least half its
 * size, or when there are more than MAX_PACKS - 1), so a byte is rewritten O(log n) times and the
 * chain stays short; a new checkpoint is written only when the deltas since the last one reach
 * CHECKPOINT_RATIO of its size, i.e. after at least that many bytes changed (amortized O(change)).
 *
 * Correctness rests on one invariant: the union of a record's packs ⊇ its snapshot. A new delta
 * is "snapshot − base snapshot" (base: the head the publisher read), and a merged delta is the
 * union of what it merges, so the invariant carries over. Layout:
 *
 *   "meshsnap.pack/v1\n" {"entries":[[digest, length], …]} "\n" <bytes of each entry, in order>
 */
import { MeshsnapError } from '../../errors.js';
import { compositeParts, isComposite, materialize } from '../composite.js';
import { parseGroupDocument, parseTableNode, parseTopDocument, readSnapshotContent, type SnapshotContent } from '../content.js';
import { digestOf, nobleSha256Hex, type Hasher } from '../digest.js';
import type { BuiltSnapshot } from '../build.js';
import type { PackList, PackRef, VersionRecord } from '../manifest.js';
import { XDS_TYPES } from '../../xds/type-urls.js';
import { CorruptObjectError, type ContentReader, type ContentWriter } from './store.js';
import { forEachLimited } from './concurrent.js';

export const PACK_MAGIC = 'meshsnap.pack/v1\n';
/** Packs a cold start reads at most: one checkpoint and MAX_PACKS - 1 deltas. */
export const MAX_PACKS = 8;
/** A new checkpoint once the deltas since the last one add up to this share of it. */
export const CHECKPOINT_RATIO = 0.5;

const utf8 = new TextEncoder();
const decoder = new TextDecoder();

export type PackEntries = ReadonlyMap<string, Uint8Array>;

export class InvalidPackError extends MeshsnapError {
  override readonly name = 'InvalidPackError';
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super('internal', message, options);
  }
}

/** Deterministic: entries sorted by digest, so the same content is the same pack. */
export function encodePack(entries: PackEntries): Uint8Array {
  const sorted = [...entries].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const head = utf8.encode(`${PACK_MAGIC}${JSON.stringify({ entries: sorted.map(([d, b]) => [d, b.byteLength]) })}\n`);
  const out = new Uint8Array(head.byteLength + sorted.reduce((n, [, b]) => n + b.byteLength, 0));
  out.set(head, 0);
  let at = head.byteLength;
  for (const [, b] of sorted) {
    out.set(b, at);
    at += b.byteLength;
  }
  return out;
}

/** The entries, each verified against its digest (CorruptObjectError) unless `verify` is false. */
export function decodePack(bytes: Uint8Array, hasher: Hasher = nobleSha256Hex, verify = true): Map<string, Uint8Array> {
  const magic = utf8.encode(PACK_MAGIC);
  if (bytes.byteLength < magic.byteLength || decoder.decode(bytes.subarray(0, magic.byteLength)) !== PACK_MAGIC) throw new InvalidPackError('not a meshsnap pack');
  const nl = bytes.indexOf(10, magic.byteLength);
  if (nl < 0) throw new InvalidPackError('pack index is not terminated');
  let index: unknown;
  try {
    index = JSON.parse(decoder.decode(bytes.subarray(magic.byteLength, nl)));
  } catch {
    throw new InvalidPackError('pack index is not JSON');
  }
  const list = (index as { entries?: unknown } | null)?.entries;
  if (!Array.isArray(list)) throw new InvalidPackError('pack index has no entries');
  const out = new Map<string, Uint8Array>();
  let at = nl + 1;
  for (const e of list as unknown[]) {
    if (!Array.isArray(e) || typeof e[0] !== 'string' || !Number.isInteger(e[1]) || (e[1] as number) < 0) throw new InvalidPackError('bad pack index entry');
    const [digest, length] = e as [string, number];
    if (at + length > bytes.byteLength) throw new InvalidPackError('pack is truncated');
    const entry = bytes.subarray(at, at + length);
    at += length;
    if (verify) {
      const actual = digestOf(entry, hasher);
      if (actual !== digest) throw new CorruptObjectError(digest, actual, 'pack entry');
    }
    out.set(digest, entry);
  }
  if (at !== bytes.byteLength) throw new InvalidPackError('pack has trailing bytes');
  return out;
}

/** Every pack a record names (for gc: they are objects, referenced by the record). */
export const packDigests = (record: Pick<VersionRecord, 'packs'>): string[] => (record.packs ? [record.packs.checkpoint.digest, ...record.packs.deltas.map((p) => p.digest)] : []);

type Role = 'top' | 'classes' | 'index' | 'group' | 'table';
type Reader = (digest: string) => Promise<Uint8Array | null> | Uint8Array | null;

/** The documents (with their role) and objects a snapshot document names. */
function childrenOf(bytes: Uint8Array, role: Role): { docs: [string, Role][]; objects: string[] } {
  const json = JSON.parse(decoder.decode(bytes)) as unknown;
  const docs: [string, Role][] = [];
  const objects: string[] = [];
  if (role === 'top') {
    const t = parseTopDocument(json);
    docs.push([t.classes, 'classes'], [t.groups, 'index']);
  } else if (role === 'group') {
    const g = parseGroupDocument(json);
    for (const type of XDS_TYPES) docs.push([g[type], 'table']);
  } else if (role === 'index' || role === 'table') {
    const node = parseTableNode(json);
    if ('children' in node) for (const d of Object.values(node.children)) docs.push([d, role]);
    else if (role === 'index') for (const d of Object.values(node.entries)) docs.push([d, 'group']);
    else objects.push(...Object.values(node.entries));
  }
  return { docs, objects };
}

/**
 * Walks a snapshot tree from its top document, each document once. `enter` sees a document and
 * the flag its parent passed down, and returns the flag for its children, or null to skip them;
 * `onObject` sees every object digest under an entered table leaf, with the leaf's flag.
 */
async function walkTree<F>(
  top: string,
  read: Reader,
  flag: F,
  enter: (digest: string, flag: F) => F | null,
  onObject: (digest: string, flag: F) => void,
): Promise<void> {
  const seen = new Set<string>();
  const visit = async (digest: string, role: Role, inherited: F): Promise<void> => {
    // Keyed by flag too: a document shared by two parents with different flags is seen with both.
    const key = `${String(inherited)} ${digest}`;
    if (seen.has(key)) return;
    seen.add(key);
    const mine = enter(digest, inherited);
    if (mine === null) return;
    const bytes = await read(digest);
    if (!bytes) throw new InvalidPackError(`document ${digest} (${role}) is not available`);
    const { docs, objects } = childrenOf(bytes, role);
    for (const o of objects) onObject(o, mine);
    await Promise.all(docs.map(([d, r]) => visit(d, r, mine)));
  };
  await visit(top, 'top', flag);
}

/** Every document and object of a snapshot, with bytes. */
export async function snapshotEntries(top: string, read: Reader, readObject: Reader): Promise<Map<string, Uint8Array>> {
  const out = new Map<string, Uint8Array>();
  const objects = new Set<string>();
  await walkTree(
    top,
    async (d) => {
      const b = await read(d);
      if (b) out.set(d, b);
      return b;
    },
    true,
    () => true,
    (d) => objects.add(d),
  );
  const get = async (d: string): Promise<Uint8Array> => {
    const b = out.get(d) ?? (await readObject(d));
    if (!b) throw new InvalidPackError(`object ${d} is not available`);
    out.set(d, b);
    return b;
  };
  // A composite object's parts are objects of the snapshot too (composite.ts).
  await Promise.all([...objects].map(async (d) => Promise.all((compositeParts(await get(d)) ?? []).map(get))));
  return out;
}

/**
 * What a full build has that the stored snapshot `base` has not. Only base documents the new
 * snapshot lacks are read: a document both have roots a subtree both have.
 */
export async function newSince(store: Pick<ContentReader, 'getDocument'>, snapshot: Pick<BuiltSnapshot, 'digest' | 'documents' | 'objects'>, base: string): Promise<Map<string, Uint8Array>> {
  const mine = new Map<string, Uint8Array>(snapshot.documents.map((d) => [d.digest, d.bytes]));
  const old = new Set<string>();
  const shared = new Set<string>();
  await walkTree(
    base,
    (d) => store.getDocument(d),
    true,
    (d) => {
      old.add(d);
      if (!mine.has(d)) return true;
      shared.add(d);
      return null;
    },
    (d) => old.add(d),
  );
  // Inside the new tree (in memory), everything under a shared document is old too.
  await walkTree(
    snapshot.digest,
    (d) => mine.get(d) ?? null,
    false,
    (d, under) => {
      const isOld = under || shared.has(d);
      if (isOld) old.add(d);
      return isOld;
    },
    (d, under) => {
      if (under) old.add(d);
    },
  );
  // The parts of a composite the base has are the base's too.
  for (const [d, b] of snapshot.objects) if (old.has(d)) for (const p of compositeParts(b) ?? []) old.add(p);
  const out = new Map<string, Uint8Array>();
  for (const [d, b] of mine) if (!old.has(d)) out.set(d, b);
  for (const [d, b] of snapshot.objects) if (!old.has(d)) out.set(d, b);
  return out;
}

export interface PackWriteResult {
  readonly packs: PackList;
  /** Pack bytes newly stored. */
  readonly bytesWritten: number;
}

/**
 * Writes the packs for a snapshot about to be published on top of `base` (the head's record,
 * or null for a first version) and returns the list for its record.
 */
export async function writePacks(store: ContentReader & ContentWriter, snapshot: BuiltSnapshot, base: VersionRecord | null, hasher: Hasher = nobleSha256Hex): Promise<PackWriteResult> {
  let bytesWritten = 0;
  const put = async (entries: PackEntries, bytes: Uint8Array): Promise<PackRef> => {
    const digest = digestOf(bytes, hasher);
    // A small pack goes through the store's small-batch path when it has one (one object, no layers).
    const created = store.putLayered && bytes.byteLength <= SMALL_PACK ? (await store.putLayered(new Map([[digest, bytes]]), [])).objects.length > 0 : (await store.putObject(digest, bytes)) === 'created';
    if (created) bytesWritten += bytes.byteLength;
    recentPacks.remember(digest, entries, bytes.byteLength);
    return { digest, bytes: bytes.byteLength };
  };
  const loaded = new Map<string, ReadonlyMap<string, Uint8Array>>();
  const readPack = async (ref: PackRef): Promise<ReadonlyMap<string, Uint8Array>> => {
    let m = loaded.get(ref.digest) ?? recentPacks.get(ref.digest);
    if (!m) {
      const bytes = await store.getObject(ref.digest);
      if (!bytes) throw new InvalidPackError(`pack ${ref.digest} is missing`);
      m = decodePack(bytes, hasher);
    }
    loaded.set(ref.digest, m);
    return m;
  };
  const checkpoint = async (): Promise<PackWriteResult> => {
    let entries: Map<string, Uint8Array>;
    if (snapshot.base === undefined) {
      entries = new Map(snapshot.documents.map((d) => [d.digest, d.bytes]));
      for (const [d, b] of snapshot.objects) entries.set(d, b);
    } else {
      // A delta build holds only what changed: the rest comes from the base's packs, else the store.
      const have = new Map<string, Uint8Array>(snapshot.documents.map((d) => [d.digest, d.bytes]));
      for (const [d, b] of snapshot.objects) have.set(d, b);
      const basePacks = base?.packs ? await Promise.all(packRefs(base.packs).map((r) => readPack(r).catch(() => new Map<string, Uint8Array>()))) : [];
      for (const m of basePacks) for (const [d, b] of m) if (!have.has(d)) have.set(d, b);
      entries = await snapshotEntries(
        snapshot.digest,
        (d) => have.get(d) ?? store.getDocument(d),
        (d) => have.get(d) ?? store.getObject(d),
      );
    }
    return { packs: { checkpoint: await put(entries, encodePack(entries)), deltas: [] }, bytesWritten };
  };

  const chain = base?.packs;
  if (!chain || !base) return checkpoint();
  let delta: Map<string, Uint8Array>;
  if (snapshot.base === base.digest) {
    delta = new Map(snapshot.documents.map((d) => [d.digest, d.bytes]));
    for (const [d, b] of snapshot.objects) delta.set(d, b);
  } else if (snapshot.base === undefined) {
    delta = await newSince(store, snapshot, base.digest);
  } else {
    return checkpoint(); // a delta of something other than the head: rare (a racing publisher)
  }
  if (delta.size === 0) return { packs: chain, bytesWritten };
  let last = encodePack(delta);
  const sinceCheckpoint = chain.deltas.reduce((n, p) => n + p.bytes, 0) + last.byteLength;
  if (sinceCheckpoint > CHECKPOINT_RATIO * chain.checkpoint.bytes) return checkpoint();

  // Binary-counter merging: fold the newest pack into the one before while it is at least half
  // its size, or while the chain is too long.
  const deltas = [...chain.deltas];
  let lastEntries: PackEntries = delta;
  for (;;) {
    const prev = deltas[deltas.length - 1];
    if (!prev || (last.byteLength * 2 < prev.bytes && deltas.length + 1 <= MAX_PACKS - 1)) break;
    const merged = new Map(await readPack(prev));
    for (const [d, b] of lastEntries) merged.set(d, b);
    deltas.pop();
    lastEntries = merged;
    last = encodePack(merged);
  }
  deltas.push(await put(lastEntries, last));
  return { packs: { checkpoint: chain.checkpoint, deltas }, bytesWritten };
}

const packRefs = (packs: PackList): PackRef[] => [packs.checkpoint, ...packs.deltas];

/** Packs up to this size are written with the store's putLayered when it has one. */
const SMALL_PACK = 1 << 20;

/**
 * The entries of the packs this process wrote last, up to a byte budget: the next publish merges
 * its delta into the newest of them, and reads it from here instead of the store (a pack is
 * content-addressed: the entries under a digest never change).
 */
class RecentPacks {
  private readonly packs = new Map<string, { readonly entries: PackEntries; readonly bytes: number }>();
  private bytes = 0;

  constructor(private readonly budget: number) {}

  get(digest: string): PackEntries | undefined {
    return this.packs.get(digest)?.entries;
  }

  remember(digest: string, entries: PackEntries, bytes: number): void {
    if (bytes > this.budget || this.packs.has(digest)) return;
    this.packs.set(digest, { entries, bytes });
    this.bytes += bytes;
    for (const [d, p] of this.packs) {
      if (this.bytes <= this.budget) break;
      this.packs.delete(d);
      this.bytes -= p.bytes;
    }
  }
}

const recentPacks = new RecentPacks(16 << 20);

export interface PackedLoad {
  readonly content: SnapshotContent;
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
export async function loadSnapshotPacked(store: Pick<ContentReader, 'getObject' | 'getDocument'>, record: Pick<VersionRecord, 'digest' | 'packs'>, hasher: Hasher = nobleSha256Hex): Promise<PackedLoad | null> {
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
  const content = await readSnapshotContent(async (d) => read(d), record.digest);
  if (!content) return null;
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
  return { content, objects, packReads, fallbackReads };
}

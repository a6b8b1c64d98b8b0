/**
 * Which documents and objects a snapshot holds (snapshotEntries), and which of them a stored
 * snapshot lacks (newSince): what checkpoint and delta packs hold (packs.ts).
 */
import { compositeParts } from '../composite.js';
import { parseGroupDocument, parseTableNode, parseTopDocument } from '../content.js';
import type { BuiltSnapshot } from '../build.js';
import { XDS_TYPES } from '../../xds/type-urls.js';
import { InvalidPackError } from './pack-format.js';
import type { ContentReader } from './store.js';

const decoder = new TextDecoder();

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
    else for (const d of Object.values(node.entries)) objects.push(d);
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
export async function newSince(
  store: Pick<ContentReader, 'getDocument'>,
  snapshot: Pick<BuiltSnapshot, 'digest' | 'documents' | 'objects'>,
  base: string,
): Promise<Map<string, Uint8Array>> {
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
  // By digest, then bytes: spooled objects (object-spool.ts) are read only when needed.
  const objects = snapshot.objects;
  for (const d of objects.keys())
    if (old.has(d)) for (const p of compositeParts(objects.get(d) as Uint8Array) ?? []) old.add(p);
  const out = new Map<string, Uint8Array>();
  for (const [d, b] of mine) if (!old.has(d)) out.set(d, b);
  for (const d of objects.keys()) if (!old.has(d)) out.set(d, objects.get(d) as Uint8Array);
  return out;
}

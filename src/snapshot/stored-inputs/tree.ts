/**
 * The stored inputs tree (`meshsnap.inputs/v2`): a Merkle tree of content-addressed documents,
 * stored with the store's `putDocuments`, built like the snapshot's tables (src/snapshot/tree.ts):
 *
 *   top     {"schema":"meshsnap.inputs/v2","layers":{"config":<table root>,"endpoints":<table root>}}
 *   table   `Kind/namespace/name` → object digest, as a fixed-depth hash trie
 *           (leaves {"entries":{key:digest,…}}, interior nodes {"children":{hexDigit:digest,…}})
 *
 * per layer (keys.ts). Its top document's digest is THE inputs digest: the snapshot's
 * `inputsDigest` and the version record's `inputs`. The trie is a pure function of its entries,
 * so the root is the same whether built from scratch (`buildStoredInputs`: the CLI, the Worker, a
 * remote compile) or updated object by object (`StoredInputsTree`, the watcher: one change
 * rewrites one leaf, ≤ 3 interior nodes and the top). Two documents with one key (the same object
 * in two files) keep the one with the smaller digest, whatever the reading order. Not stored: text
 * that is not YAML/JSON and documents that are not objects; their `parse-error` diagnostics stay in
 * the version record.
 */
import { canonicalJson } from '../../canonical-json.js';
import { parseDocuments, type RawDocument } from '../../inputs/parse.js';
import { nobleSha256Hex, type Hasher } from '../digest.js';
import { DigestSorter } from '../sorted-digests.js';
import { ByteSlab } from '../../xds/wire/slab.js';
import { PackedObjects } from './packed-objects.js';
import { DocumentSink, MAX_DEPTH, TableTree, writeUnsortedTable, type TreeDocument } from '../tree.js';
import { appendObject, type ObjectSpool } from '../build/object-spool.js';
import {
  SHARED_BYTES,
  storedDocument,
  storedEntryOfRetention,
  type StoredEntry,
  type StoredObject,
} from './canonical-object.js';
import { buildInputSetRetention } from '../../inputs/retain.js';
import type { InputSet } from '../../model/inputs.js';
import { INPUT_LAYERS, keyString, type InputLayer } from './keys.js';

export const STORED_INPUTS_SCHEMA = 'meshsnap.inputs/v2';
/** The flat manifest of earlier versions (one store object); still readable. */
export const STORED_INPUTS_SCHEMA_V1 = 'meshsnap.inputs/v1';

/** The top document of the inputs tree. */
export interface InputsTopDocument {
  readonly schema: typeof STORED_INPUTS_SCHEMA;
  /** Per layer: root digest of its key → object digest table. */
  readonly layers: Readonly<Record<InputLayer, string>>;
}

export interface BuiltInputs {
  /** The top document's digest: the inputs digest. */
  readonly digest: string;
  /** Documents to store, children before parents (ascending `layer`), the top last: every document, or after an update only the rewritten ones. */
  readonly documents: readonly TreeDocument[];
  /** Objects to store, digest → canonical JSON bytes: every object, or after an update only the ones set since the last commit. */
  readonly objects: ReadonlyMap<string, Uint8Array>;
  /** Objects in the tree. */
  readonly count: number;
}

/** Document layers: table leaves at 0, their roots at ≤ MAX_DEPTH, the top above them. */
const TOP_LAYER = MAX_DEPTH + 1;

/**
 * The inputs tree, updatable object by object. `set`/`delete` edit it; `commit` returns the new
 * root and only what changed since the last commit (documents rewritten, objects set);
 * `complete` returns every document and object (for a store that may lack earlier commits).
 */
export class StoredInputsTree {
  private readonly tables: Record<InputLayer, TableTree> = { config: new TableTree(0), endpoints: new TableTree(0) };
  /** key → the object in the tree (its bytes, for `complete`). */
  private readonly objects = new Map<string, StoredObject>();
  /** Keys set since the last commit. */
  private pending = new Set<string>();
  private dirty = true;
  private top: TreeDocument | undefined;

  constructor(private readonly hasher: Hasher = nobleSha256Hex) {}

  get size(): number {
    return this.objects.size;
  }

  /** The digest of the last commit. */
  get digest(): string {
    if (!this.top || this.dirty) throw new Error('StoredInputsTree: commit() before reading the digest');
    return this.top.digest;
  }

  get(key: string): StoredObject | undefined {
    return this.objects.get(key);
  }

  /** Adds or replaces an object (under `keyString(o.key)`). */
  set(o: StoredObject): void {
    const key = keyString(o.key);
    const prev = this.objects.get(key);
    if (prev && prev.digest === o.digest && prev.layer === o.layer) return;
    if (prev && prev.layer !== o.layer) this.tables[prev.layer].delete(key);
    this.objects.set(key, o);
    this.tables[o.layer].set(key, o.digest);
    this.pending.add(key);
    this.dirty = true;
  }

  delete(key: string): boolean {
    const prev = this.objects.get(key);
    if (!prev) return false;
    this.objects.delete(key);
    this.tables[prev.layer].delete(key);
    this.dirty = true;
    return true;
  }

  /** Writes the changed documents; returns them, the objects set since the last commit, and the root. */
  commit(): BuiltInputs {
    const objects = new Map<string, Uint8Array>();
    for (const key of this.pending) {
      const o = this.objects.get(key);
      if (o) objects.set(o.digest, o.bytes);
    }
    this.pending = new Set();
    const sink = new DocumentSink(this.hasher);
    return {
      digest: this.commitTree(sink),
      documents: sink.sorted(),
      objects: sortedByKey(objects),
      count: this.objects.size,
    };
  }

  /** Every document and object of the current tree (commits first). */
  complete(): BuiltInputs {
    this.pending = new Set();
    const digest = this.commitTree(new DocumentSink(this.hasher));
    const sink = new DocumentSink(this.hasher);
    for (const layer of INPUT_LAYERS) this.tables[layer].documents((d) => sink.add(d));
    sink.add(this.top as TreeDocument);
    const objects = new Map<string, Uint8Array>();
    for (const o of this.objects.values()) objects.set(o.digest, o.bytes);
    return { digest, documents: sink.sorted(), objects: sortedByKey(objects), count: this.objects.size };
  }

  /** Writes the rewritten documents into `sink`; returns the root. */
  private commitTree(sink: DocumentSink): string {
    if (this.dirty || !this.top) {
      const layers = {
        config: this.tables.config.commit(sink).digest,
        endpoints: this.tables.endpoints.commit(sink).digest,
      };
      const top: InputsTopDocument = { schema: STORED_INPUTS_SCHEMA, layers };
      this.top = sink.emit(canonicalJson(top), TOP_LAYER);
      this.dirty = false;
    }
    return this.top.digest;
  }
}

/** By digest (a numeric sort of the digests' leading digits, not a comparator call per comparison: 54k objects at 10k). */
function sortedByKey(m: ReadonlyMap<string, Uint8Array>): Map<string, Uint8Array> {
  const sorter = new DigestSorter<Uint8Array>();
  for (const [digest, bytes] of m) sorter.add(digest, bytes);
  return sorter.toMap();
}

/**
 * The inputs of a set of objects, built from scratch: every document and object. Two objects with
 * one key keep the smaller digest. Built bottom-up in one pass (the same documents as a
 * `StoredInputsTree` given every object, without its per-object bookkeeping): each layer's table
 * written straight from its keys (src/snapshot/tree.ts writeUnsortedTable), and the objects packed
 * in digest order (packed-objects.ts: one buffer, no entry per object), or written to `spool`.
 */
export function buildStoredInputs(
  objects: Iterable<StoredEntry>,
  hasher: Hasher = nobleSha256Hex,
  spool?: ObjectSpool,
): BuiltInputs {
  const entries = Array.isArray(objects) ? (objects as readonly StoredEntry[]) : [...objects];
  return buildFromEntries(entries, hasher, (kept) =>
    PackedObjects.of(
      kept.map((i) => (entries[i] as StoredEntry).digest),
      kept.map((i) => (entries[i] as StoredEntry).bytes),
      spool,
    ),
  );
}

/** A stored object's identity and digest: what the tree is built from (its bytes are elsewhere). */
type EntryIdentity = Pick<StoredEntry, 'key' | 'layer' | 'digest'>;

/**
 * The tree of `entries`; `objectsOf` gives the objects map of the entries kept (positions in
 * `entries`, ascending: one per key, once per digest).
 */
function buildFromEntries(
  entries: readonly EntryIdentity[],
  hasher: Hasher,
  objectsOf: (kept: readonly number[]) => ReadonlyMap<string, Uint8Array>,
): BuiltInputs {
  const names: Record<InputLayer, string[]> = { config: [], endpoints: [] };
  const digests: Record<InputLayer, string[]> = { config: [], endpoints: [] };
  for (const o of entries) {
    names[o.layer].push(keyString(o.key));
    digests[o.layer].push(o.digest);
  }
  const sink = new DocumentSink(hasher);
  const config = writeUnsortedTable(names.config, digests.config, sink);
  const endpoints = config && writeUnsortedTable(names.endpoints, digests.endpoints, sink);
  // A key repeats (the same object in two files): the tables pick between its objects.
  if (!config || !endpoints) return buildPicking(entries, hasher, objectsOf);
  return {
    digest: writeTop(sink, { config: config.digest, endpoints: endpoints.digest }),
    documents: sink.sorted(),
    objects: objectsOf([...entries.keys()]),
    count: entries.length,
  };
}

/** The top document (the inputs digest) above the layers' roots. */
function writeTop(sink: DocumentSink, layers: Record<InputLayer, string>): string {
  const top: InputsTopDocument = { schema: STORED_INPUTS_SCHEMA, layers };
  return sink.emit(canonicalJson(top), TOP_LAYER).digest;
}

/** `buildFromEntries` of entries some of which share a key: each key keeps its smallest digest. */
function buildPicking(
  entries: readonly EntryIdentity[],
  hasher: Hasher,
  objectsOf: (kept: readonly number[]) => ReadonlyMap<string, Uint8Array>,
): BuiltInputs {
  const tables: Record<InputLayer, TableTree> = { config: new TableTree(0), endpoints: new TableTree(0) };
  const keys: string[] = [];
  for (const o of entries) {
    const key = keyString(o.key);
    const prev = tables[o.layer].get(key);
    // A key's layer is its kind's (keys.ts layerOf): objects of one key meet in one table.
    if (prev === undefined || o.digest < prev) tables[o.layer].set(key, o.digest);
    keys.push(key);
  }
  const kept: number[] = [];
  const added = new Set<string>();
  for (let i = 0; i < entries.length; i++) {
    const o = entries[i] as EntryIdentity;
    // Once per digest: an object that lost to another of its key, or repeats a kept one's bytes, is left out.
    if (tables[o.layer].get(keys[i] as string) !== o.digest || added.has(o.digest)) continue;
    added.add(o.digest);
    kept.push(i);
  }
  const sink = new DocumentSink(hasher);
  const layers = { config: tables.config.commit(sink).digest, endpoints: tables.endpoints.commit(sink).digest };
  return {
    digest: writeTop(sink, layers),
    documents: sink.sorted(),
    objects: objectsOf(kept),
    count: tables.config.size + tables.endpoints.size,
  };
}

/** Stored inputs of raw documents (as `meshsnap compile` reads them): what src/inputs/retain.ts keeps of each. */
export function storedInputsOfDocuments(docs: readonly RawDocument[], hasher?: Hasher): BuiltInputs {
  return buildStoredInputs(
    docs.flatMap((d) => storedDocument(d.object, hasher) ?? []),
    hasher,
  );
}

/**
 * The InputSet of raw documents and their stored inputs, from one validation pass
 * (src/inputs/retain.ts `buildInputSetRetention`): each document's stored bytes are written (from
 * its recorded reads, or its projection) and hashed as soon as it is read; the objects' bytes go to
 * `spool` when given (as PackedObjects.spooledTo would move them there).
 */
export function inputSetAndStoredInputs(
  docs: readonly RawDocument[],
  hasher?: Hasher,
  spool?: ObjectSpool,
): { readonly inputs: InputSet; readonly stored: BuiltInputs } {
  return spool ? spooledInputs(docs, spool, hasher) : slabbedInputs(docs, hasher);
}

/** The objects' bytes kept in memory, in slabs, then packed. */
function slabbedInputs(docs: readonly RawDocument[], hasher?: Hasher): { inputs: InputSet; stored: BuiltInputs } {
  const objects: StoredEntry[] = [];
  const slab = new ByteSlab();
  const inputs = buildInputSetRetention(docs, (doc, retention) => {
    const object = storedEntryOfRetention(doc.object, retention, hasher, slab);
    if (object) objects.push(object);
  });
  return { inputs, stored: buildStoredInputs(objects, hasher) };
}

/**
 * The objects' bytes appended to the spool as soon as they are written (never held in memory: no
 * slab, no view per object), the tree built from their identities.
 */
function spooledInputs(
  docs: readonly RawDocument[],
  spool: ObjectSpool,
  hasher: Hasher = nobleSha256Hex,
): { inputs: InputSet; stored: BuiltInputs } {
  const entries: EntryIdentity[] = [];
  const handles: number[] = [];
  const inputs = buildInputSetRetention(docs, (doc, retention) => {
    const object = storedEntryOfRetention(doc.object, retention, hasher, SHARED_BYTES);
    if (!object) return;
    entries.push({ key: object.key, layer: object.layer, digest: object.digest });
    handles.push(appendObject(spool, object.digest, object.bytes));
  });
  const stored = buildFromEntries(entries, hasher, (kept) =>
    PackedObjects.ofSpooled(
      kept.map((i) => (entries[i] as EntryIdentity).digest),
      kept.map((i) => handles[i] as number),
      spool,
    ),
  );
  return { inputs, stored };
}

/** Stored inputs of input files (`meshsnap compile`): parsed as the compiler parses them. */
export function storedInputsOfTexts(
  files: readonly { readonly file: string; readonly text: string }[],
  hasher?: Hasher,
): BuiltInputs {
  const docs: RawDocument[] = [];
  for (const f of files) for (const d of parseDocuments(f.text, f.file).docs) docs.push(d);
  return storedInputsOfDocuments(docs, hasher);
}

/**
 * The snapshot, stored as a Merkle tree of small content-addressed documents.
 *
 * Every document is canonical JSON (keys sorted, no whitespace), named by `sha256:<hex>` of its
 * bytes and stored once: a document that already exists is never written again, so two versions
 * share every document they have in common and storage grows with the change, not the mesh.
 *
 *   top       {"schema":"meshsnap.snapshot/v2","compiler":{name,version},"inputsDigest":…,
 *              "classes":<classes digest>,"groups":<table root: group id → group digest>}
 *   classes   {"classes":[ProxyClass…],"selectors":[ClassSelector…]}     (sorted, plain copies)
 *   group     {"clusters":<table root>,"endpoints":<table root>,"listeners":<table root>,"routes":<table root>}
 *   table     a name → digest map stored as a fixed-depth hash trie:
 *               leaf      {"entries":{name:digest,…}}
 *               interior  {"children":{hexDigit:digest,…}}             (non-empty children only)
 *
 * A table of n entries has depth d = ⌈log16(n / 32)⌉ (0 for n ≤ 32: the root is a leaf). An entry
 * sits in the leaf named by the first d hex digits of FNV-1a-32 of its bucket key (the name after
 * its last `|`, so all clusters/ClusterLoadAssignments of one service share a leaf), and an
 * interior node at prefix p lists its children p0…pf. Depth and placement depend only on the
 * entries, so the tree is a pure function of the content: the same inputs in any order, built
 * from scratch or by applying a delta, give the same documents and digests (tree.ts, build.ts).
 * Group tables and the group index (group id → group digest) use the same trie. With a
 * ClusterLoadAssignment changed at 10k services, a publish writes one leaf (~1 KB), the ≤ 3
 * interior nodes above it (≤ 1.3 KB each), the group document, one index path and the top.
 *
 * **The snapshot digest is the top document's digest.** Readers use the expanded view,
 * `SnapshotContent` below: `readSnapshotContent` reads the top document and every document under
 * it (each verified against its digest by the store) and returns it.
 */
import { MeshsnapError } from '../errors.js';
import type { ClassSelector, GroupId, ProxyClass } from '../compile/types.js';
import { XDS_TYPES, type XdsType } from '../xds/type-urls.js';
import { canonicalJson } from '../canonical-json.js';
import { isDigest, nobleSha256Hex, type Hasher } from './digest.js';
import { DocumentSink, LAYER, TableTree, type TreeDocument } from './tree.js';

export const SNAPSHOT_SCHEMA = 'meshsnap.snapshot/v2';

export interface CompilerInfo {
  readonly name: string;
  readonly version: string;
}

/** Per xDS type: resource name → object digest. */
export type GroupDigests = { readonly [T in XdsType]: Readonly<Record<string, string>> };

/** The expanded snapshot: what relays and the CLI read. */
export interface SnapshotContent {
  readonly schema: typeof SNAPSHOT_SCHEMA;
  readonly compiler: CompilerInfo;
  readonly inputsDigest: string;
  readonly groups: Readonly<Record<GroupId, GroupDigests>>;
  readonly classes: readonly ProxyClass[];
  readonly selectors: readonly ClassSelector[];
}

/** The top document. */
export interface TopDocument {
  readonly schema: typeof SNAPSHOT_SCHEMA;
  readonly compiler: CompilerInfo;
  readonly inputsDigest: string;
  /** Digest of the classes document. */
  readonly classes: string;
  /** Root digest of the table group id → group document digest. */
  readonly groups: string;
}

export interface ClassesDocument {
  readonly classes: readonly ProxyClass[];
  readonly selectors: readonly ClassSelector[];
}

/** Per xDS type: root digest of the table name → object digest. */
export type GroupDocument = { readonly [T in XdsType]: string };

export type TableNode =
  { readonly entries: Readonly<Record<string, string>> } | { readonly children: Readonly<Record<string, string>> };

/** Thrown when a stored document is not a snapshot document this version understands. */
export class InvalidSnapshotContentError extends MeshsnapError {
  override readonly name = 'InvalidSnapshotContentError';
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super('internal', message, options);
  }
}

/** A document the tree refers to is not in the store. */
export class MissingDocumentError extends MeshsnapError {
  override readonly name = 'MissingDocumentError';
  constructor(
    readonly digest: string,
    readonly what: string,
  ) {
    super('internal', `${what} document ${digest} is missing from the store`);
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const failWith =
  (what: string) =>
  (why: string): never => {
    throw new InvalidSnapshotContentError(`not a ${what}: ${why}`);
  };

export function parseTopDocument(value: unknown): TopDocument {
  const fail = failWith(`${SNAPSHOT_SCHEMA} document`);
  if (!isRecord(value)) return fail('not an object');
  if (value.schema !== SNAPSHOT_SCHEMA) return fail(`schema is ${JSON.stringify(value.schema)}`);
  const compiler = value.compiler;
  if (!isRecord(compiler) || typeof compiler.name !== 'string' || typeof compiler.version !== 'string')
    return fail('bad compiler');
  if (typeof value.inputsDigest !== 'string') return fail('bad inputsDigest');
  if (!isDigest(value.classes)) return fail('bad classes digest');
  if (!isDigest(value.groups)) return fail('bad groups digest');
  return value as unknown as TopDocument;
}

export function parseClassesDocument(value: unknown): ClassesDocument {
  const fail = failWith('classes document');
  if (!isRecord(value)) return fail('not an object');
  if (!Array.isArray(value.classes)) return fail('bad classes');
  for (const c of value.classes as unknown[]) {
    if (
      !isRecord(c) ||
      typeof c.id !== 'string' ||
      typeof c.namespace !== 'string' ||
      !Array.isArray(c.groups) ||
      !Array.isArray(c.services)
    )
      return fail('bad class');
    if (c.generator !== 'sidecar' && c.generator !== 'grpc' && c.generator !== 'router')
      return fail(`class ${c.id}: bad generator`);
    if (c.gateways !== undefined) {
      if (!Array.isArray(c.gateways)) return fail(`class ${c.id}: bad gateways`);
      for (const g of c.gateways as unknown[])
        if (
          !isRecord(g) ||
          typeof g.namespace !== 'string' ||
          typeof g.name !== 'string' ||
          (g.selector !== undefined && !isRecord(g.selector))
        )
          return fail(`class ${c.id}: bad gateway`);
    }
    if (
      c.verifiedSecrets !== undefined &&
      (!Array.isArray(c.verifiedSecrets) || !c.verifiedSecrets.every((n) => typeof n === 'string'))
    )
      return fail(`class ${c.id}: bad verifiedSecrets`);
  }
  if (!Array.isArray(value.selectors)) return fail('bad selectors');
  for (const s of value.selectors as unknown[]) {
    if (
      !isRecord(s) ||
      typeof s.namespace !== 'string' ||
      typeof s.hostname !== 'string' ||
      !isRecord(s.selector) ||
      (s.policy !== undefined && typeof s.policy !== 'string') ||
      (s.serviceEntry !== undefined && s.serviceEntry !== true) ||
      (s.node !== undefined && typeof s.node !== 'string') ||
      (s.locality !== undefined && typeof s.locality !== 'string')
    )
      return fail('bad selector');
  }
  return value as unknown as ClassesDocument;
}

export function parseGroupDocument(value: unknown): GroupDocument {
  const fail = failWith('group document');
  if (!isRecord(value)) return fail('not an object');
  for (const type of XDS_TYPES) if (!isDigest(value[type])) return fail(`bad ${type} digest`);
  return value as unknown as GroupDocument;
}

const HEX_DIGIT = /^[0-9a-f]$/;

export function parseTableNode(value: unknown): TableNode {
  const fail = failWith('table node');
  if (!isRecord(value)) return fail('not an object');
  if (isRecord(value.entries)) {
    for (const [name, digest] of Object.entries(value.entries))
      if (!isDigest(digest)) return fail(`${name}: bad digest`);
    return value as unknown as TableNode;
  }
  if (isRecord(value.children)) {
    for (const [k, digest] of Object.entries(value.children))
      if (!HEX_DIGIT.test(k) || !isDigest(digest)) return fail(`child ${k}: bad digest`);
    return value as unknown as TableNode;
  }
  return fail('neither entries nor children');
}

/** Checks the shape of an expanded snapshot (e.g. from a test or a tool). */
export function parseSnapshotContent(value: unknown): SnapshotContent {
  const fail = failWith(`${SNAPSHOT_SCHEMA} content`);
  if (!isRecord(value)) return fail('not an object');
  if (value.schema !== SNAPSHOT_SCHEMA) return fail(`schema is ${JSON.stringify(value.schema)}`);
  const compiler = value.compiler;
  if (!isRecord(compiler) || typeof compiler.name !== 'string' || typeof compiler.version !== 'string')
    return fail('bad compiler');
  if (typeof value.inputsDigest !== 'string') return fail('bad inputsDigest');
  if (!isRecord(value.groups)) return fail('bad groups');
  for (const [id, group] of Object.entries(value.groups)) {
    if (!isRecord(group)) return fail(`group ${id} is not an object`);
    for (const type of XDS_TYPES) {
      const table = group[type];
      if (!isRecord(table)) return fail(`group ${id} has no ${type}`);
      for (const [name, digest] of Object.entries(table))
        if (!isDigest(digest)) return fail(`group ${id} ${type} ${name}: bad digest`);
    }
  }
  parseClassesDocument({ classes: value.classes, selectors: value.selectors });
  return value as unknown as SnapshotContent;
}

/** Reads one document's verified bytes (null when absent); the store checks the digest. */
export type DocumentReader = (digest: string) => Promise<Uint8Array | null>;

export interface ReadTreeOptions {
  /** Document reads in flight at once (default 32). */
  readonly concurrency?: number;
  /**
   * What an earlier read expanded (a relay's previous snapshot): a document with the same digest
   * is the same document (content-addressed), so its expansion is taken as it is, the very same
   * object, and none of its documents is read again.
   */
  readonly known?: ExpandedTrees;
}

/** One expanded table: resource name → object digest. */
export type ExpandedTable = Readonly<Record<string, string>>;

/** The expansions a read made, by document digest (readSnapshotTrees). */
export interface ExpandedTrees {
  /** Tables by root digest (the group index and every group's per-type tables). */
  readonly tables: ReadonlyMap<string, ExpandedTable>;
  /** Group documents (their tables' roots) with the tables expanded, by group document digest. */
  readonly groups: ReadonlyMap<string, { readonly doc: GroupDocument; readonly expanded: GroupDigests }>;
  readonly classes?: { readonly digest: string; readonly doc: ClassesDocument };
  /**
   * Table node documents of the tables this read walked because their root was new (a read with
   * `known` only), by digest: a table that changes again next time reads only its changed nodes.
   */
  readonly nodes?: ReadonlyMap<string, TableNode>;
}

/**
 * Reads a snapshot tree and returns the expanded view; null when the top document is absent.
 * A missing sub-document throws MissingDocumentError; a malformed one InvalidSnapshotContentError.
 */
export async function readSnapshotContent(
  read: DocumentReader,
  digest: string,
  opts: ReadTreeOptions = {},
): Promise<SnapshotContent | null> {
  return (await readSnapshotTrees(read, digest, opts))?.content ?? null;
}

/** readSnapshotContent, with what it expanded (or took from `known`) by document digest. */
export async function readSnapshotTrees(
  read: DocumentReader,
  digest: string,
  opts: ReadTreeOptions = {},
): Promise<{ readonly content: SnapshotContent; readonly trees: ExpandedTrees } | null> {
  const known = opts.known;
  const limit = limiter(opts.concurrency ?? 32);
  const decoder = new TextDecoder();
  const memo = new Map<string, Promise<unknown>>();
  const json = (d: string, what: string): Promise<unknown> => {
    let p = memo.get(d);
    if (!p) {
      p = limit(() => read(d)).then((bytes) => {
        if (!bytes) throw new MissingDocumentError(d, what);
        try {
          return JSON.parse(decoder.decode(bytes)) as unknown;
        } catch {
          throw new InvalidSnapshotContentError(`${what} document ${d} is not JSON`);
        }
      });
      memo.set(d, p);
    }
    return p;
  };
  // A changed table has a new root, but most of its nodes are the ones known from the read before.
  const nodes = known ? new Map<string, TableNode>() : undefined;
  const tableNode = async (d: string): Promise<TableNode> => {
    let n = nodes?.get(d) ?? known?.nodes?.get(d);
    if (!n) n = parseTableNode(await json(d, 'table'));
    nodes?.set(d, n);
    return n;
  };
  // Expanded tables are shared between groups with the same root (e.g. every empty table).
  const tables = new Map<string, Promise<ExpandedTable>>();
  const table = (root: string): Promise<ExpandedTable> => {
    let p = tables.get(root);
    const expanded = known?.tables.get(root);
    if (!p && expanded) tables.set(root, (p = Promise.resolve(expanded)));
    if (!p) {
      p = (async () => {
        const entries: [string, string][] = [];
        const walk = async (d: string): Promise<void> => {
          const node = await tableNode(d);
          if ('entries' in node) for (const e of Object.entries(node.entries)) entries.push(e);
          else await Promise.all(Object.values(node.children).map(walk));
        };
        await walk(root);
        entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
        return Object.fromEntries(entries);
      })();
      tables.set(root, p);
    }
    return p;
  };

  const topBytes = await read(digest);
  if (!topBytes) return null;
  let topJson: unknown;
  try {
    topJson = JSON.parse(decoder.decode(topBytes));
  } catch {
    throw new InvalidSnapshotContentError(`snapshot document ${digest} is not JSON`);
  }
  const top = parseTopDocument(topJson);
  const [classesDoc, groupIndex] = await Promise.all([
    known?.classes?.digest === top.classes
      ? known.classes.doc
      : json(top.classes, 'classes').then(parseClassesDocument),
    table(top.groups),
  ]);
  const ids = Object.keys(groupIndex);
  const groupTrees = new Map<string, { readonly doc: GroupDocument; readonly expanded: GroupDigests }>();
  const expanded = await Promise.all(
    ids.map(async (id) => {
      const d = groupIndex[id] as string;
      const seen = known?.groups.get(d);
      if (seen) {
        for (const t of XDS_TYPES)
          if (!tables.has(seen.doc[t])) tables.set(seen.doc[t], Promise.resolve(seen.expanded[t]));
        groupTrees.set(d, seen);
        return seen.expanded;
      }
      const doc = parseGroupDocument(await json(d, 'group'));
      const [clusters, endpoints, listeners, routes] = await Promise.all(XDS_TYPES.map((t) => table(doc[t])));
      const group = { clusters, endpoints, listeners, routes } as GroupDigests;
      groupTrees.set(d, { doc, expanded: group });
      return group;
    }),
  );
  const groups: Record<GroupId, GroupDigests> = {};
  ids.forEach((id, i) => (groups[id] = expanded[i] as GroupDigests));
  const content: SnapshotContent = {
    schema: SNAPSHOT_SCHEMA,
    compiler: { name: top.compiler.name, version: top.compiler.version },
    inputsDigest: top.inputsDigest,
    groups,
    classes: classesDoc.classes,
    selectors: classesDoc.selectors,
  };
  const byRoot = new Map<string, ExpandedTable>();
  for (const [root, p] of tables) byRoot.set(root, await p);
  return {
    content,
    trees: {
      tables: byRoot,
      groups: groupTrees,
      classes: { digest: top.classes, doc: classesDoc },
      ...(nodes ? { nodes } : {}),
    },
  };
}

function limiter(n: number): <T>(f: () => Promise<T>) => Promise<T> {
  let active = 0;
  const queue: (() => void)[] = [];
  return async <T>(f: () => Promise<T>): Promise<T> => {
    if (active >= n) await new Promise<void>((resolve) => queue.push(resolve));
    active++;
    try {
      return await f();
    } finally {
      active--;
      queue.shift()?.();
    }
  };
}

/**
 * The documents of an expanded snapshot, children before parents and the top last: the same
 * documents and digest a build of the same resources gives (build.ts builds them incrementally).
 */
export function snapshotDocuments(
  content: SnapshotContent,
  hasher: Hasher = nobleSha256Hex,
): { digest: string; documents: TreeDocument[] } {
  const sink = new DocumentSink(hasher);
  const index: [string, string][] = [];
  for (const id of Object.keys(content.groups).sort()) {
    const group = content.groups[id] as GroupDigests;
    const roots = {} as Record<XdsType, string>;
    for (const type of XDS_TYPES) roots[type] = TableTree.of(Object.entries(group[type])).commit(sink).digest;
    index.push([id, sink.emit(canonicalJson(roots), LAYER.groupDoc).digest]);
  }
  const classes = sink.emit(
    canonicalJson({ classes: sortedClasses(content.classes), selectors: sortedSelectors(content.selectors) }),
    LAYER.classes,
  ).digest;
  const groups = TableTree.of(index, LAYER.index).commit(sink).digest;
  const top = {
    schema: SNAPSHOT_SCHEMA,
    compiler: { name: content.compiler.name, version: content.compiler.version },
    inputsDigest: content.inputsDigest,
    classes,
    groups,
  };
  const digest = sink.emit(canonicalJson(top), LAYER.top).digest;
  return { digest, documents: sink.sorted() };
}

/** The snapshot digest of an expanded snapshot. */
export const snapshotDigest = (content: SnapshotContent, hasher?: Hasher): string =>
  snapshotDocuments(content, hasher).digest;

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

// Plain copies, sorted, so the documents hold exactly the contract's fields whatever objects the compiler used.
export const sortedClasses = (classes: readonly ProxyClass[]): ProxyClass[] =>
  [...classes].sort((a, b) => compare(a.id, b.id)).map(copyClass);
export const sortedSelectors = (selectors: readonly ClassSelector[]): ClassSelector[] =>
  [...selectors]
    .sort(
      (a, b) =>
        compare(a.namespace, b.namespace) ||
        compare(a.hostname, b.hostname) ||
        compare(a.policy ?? '', b.policy ?? '') ||
        compare(a.node ?? '', b.node ?? ''),
    )
    .map(copySelector);
const copyClass = (c: ProxyClass): ProxyClass => ({
  id: c.id,
  generator: c.generator,
  namespace: c.namespace,
  services: [...c.services],
  groups: [...c.groups],
  // Only router classes carry gateways: documents of other classes stay as they were.
  ...(c.gateways
    ? {
        gateways: c.gateways.map((g) => ({
          namespace: g.namespace,
          name: g.name,
          ...(g.selector ? { selector: { ...g.selector } } : {}),
        })),
      }
    : {}),
  ...(c.verifiedSecrets?.length ? { verifiedSecrets: [...c.verifiedSecrets] } : {}),
});
const copySelector = (s: ClassSelector): ClassSelector => ({
  namespace: s.namespace,
  hostname: s.hostname,
  selector: { ...s.selector },
  ...(s.policy !== undefined ? { policy: s.policy } : {}),
  // Only entry selectors carry the flag: documents of Kubernetes-only meshes stay as they were.
  ...(s.serviceEntry ? { serviceEntry: true as const } : {}),
  // Only meshes with locality-dependent assignments list nodes.
  ...(s.node !== undefined ? { node: s.node, locality: s.locality ?? '' } : {}),
});

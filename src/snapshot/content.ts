/**
 * The snapshot document: which resource (by digest) each group holds, plus the proxy classes and
 * selectors. It is stored as canonical JSON, and its digest names the snapshot.
 */
import type { ClassSelector, GroupId, ProxyClass } from '../compile/types.js';
import { XDS_TYPES, type XdsType } from '../xds/type-urls.js';
import { canonicalJson } from './canonical-json.js';
import { digestOf, isDigest, utf8Bytes, type Hasher } from './digest.js';

export const SNAPSHOT_SCHEMA = 'meshsnap.snapshot/v1';

export interface CompilerInfo {
  readonly name: string;
  readonly version: string;
}

/** Per xDS type: resource name → object digest. */
export type GroupDigests = { readonly [T in XdsType]: Readonly<Record<string, string>> };

export interface SnapshotContent {
  readonly schema: typeof SNAPSHOT_SCHEMA;
  readonly compiler: CompilerInfo;
  readonly inputsDigest: string;
  readonly groups: Readonly<Record<GroupId, GroupDigests>>;
  readonly classes: readonly ProxyClass[];
  readonly selectors: readonly ClassSelector[];
}

/** The stored form of a snapshot document. */
export const snapshotContentBytes = (content: SnapshotContent): Uint8Array => utf8Bytes(canonicalJson(content));

export const snapshotDigest = (content: SnapshotContent, hasher?: Hasher): string => digestOf(snapshotContentBytes(content), hasher);

/** Thrown when a stored document is not a snapshot this version understands. */
export class InvalidSnapshotContentError extends Error {
  override readonly name = 'InvalidSnapshotContentError';
}

/** Checks the shape of a parsed snapshot document (e.g. read back from a store). */
export function parseSnapshotContent(value: unknown): SnapshotContent {
  const fail = (why: string): never => {
    throw new InvalidSnapshotContentError(`not a ${SNAPSHOT_SCHEMA} document: ${why}`);
  };
  if (!isRecord(value)) return fail('not an object');
  if (value.schema !== SNAPSHOT_SCHEMA) return fail(`schema is ${JSON.stringify(value.schema)}`);
  const compiler = value.compiler;
  if (!isRecord(compiler) || typeof compiler.name !== 'string' || typeof compiler.version !== 'string') return fail('bad compiler');
  if (typeof value.inputsDigest !== 'string') return fail('bad inputsDigest');
  if (!isRecord(value.groups)) return fail('bad groups');
  for (const [id, group] of Object.entries(value.groups)) {
    if (!isRecord(group)) return fail(`group ${id} is not an object`);
    for (const type of XDS_TYPES) {
      const table = group[type];
      if (!isRecord(table)) return fail(`group ${id} has no ${type}`);
      for (const [name, digest] of Object.entries(table)) if (!isDigest(digest)) return fail(`group ${id} ${type} ${name}: bad digest`);
    }
  }
  if (!Array.isArray(value.classes)) return fail('bad classes');
  for (const c of value.classes as unknown[]) {
    if (!isRecord(c) || typeof c.id !== 'string' || typeof c.namespace !== 'string' || !Array.isArray(c.groups) || !Array.isArray(c.services)) return fail('bad class');
    if (c.generator !== 'sidecar' && c.generator !== 'grpc') return fail(`class ${c.id}: bad generator`);
  }
  if (!Array.isArray(value.selectors)) return fail('bad selectors');
  for (const s of value.selectors as unknown[]) {
    if (!isRecord(s) || typeof s.namespace !== 'string' || typeof s.hostname !== 'string' || !isRecord(s.selector)) return fail('bad selector');
  }
  return value as unknown as SnapshotContent;
}

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Semantic diff of two snapshots per proxy class and xDS type: added, removed and changed
 * resources, changed ones with their field-level changes (decoded to proto3 JSON, compared with
 * unordered lists keyed, see xds-keys.ts). A resource shared by many classes is decoded and
 * diffed once.
 */
import { classifyNode, resourcesForClass, type NodeIdentity } from '../../snapshot/classify.js';
import type { SnapshotContent } from '../../snapshot/content.js';
import { resourceToJson } from '../../xds/json.js';
import { XDS_TYPE_NAME, XDS_TYPES, type XdsType } from '../../xds/type-urls.js';
import { HistoryError } from '../errors.js';
import { diffJson, type FieldChange, type Json } from './structural.js';
import { xdsKeyOf } from './xds-keys.js';

export type ObjectReader = (digest: string) => Promise<Uint8Array | null>;

export interface SnapshotSide {
  readonly content: SnapshotContent;
  readonly getObject: ObjectReader;
}

export interface ChangedResource {
  readonly name: string;
  readonly fields: readonly FieldChange[];
}

export interface TypeDiff {
  readonly added: readonly string[];
  readonly removed: readonly string[];
  readonly changed: readonly ChangedResource[];
}

export interface ClassDiff {
  /** The class in A and in B (they differ only when a node was classified differently). */
  readonly classA?: string;
  readonly classB?: string;
  readonly types: Partial<Record<XdsType, TypeDiff>>;
}

export interface ResourceDiffOptions {
  readonly node?: NodeIdentity;
  readonly types?: readonly XdsType[];
}

export async function diffResources(
  a: SnapshotSide,
  b: SnapshotSide,
  opts: ResourceDiffOptions = {},
): Promise<ClassDiff[]> {
  const pairs: [string | undefined, string | undefined][] = [];
  if (opts.node) {
    const ca = classifyNode(a.content, opts.node);
    const cb = classifyNode(b.content, opts.node);
    if (!ca.ok && !cb.ok) throw new HistoryError(ca.reason);
    pairs.push([ca.ok ? ca.classId : undefined, cb.ok ? cb.classId : undefined]);
  } else {
    const ids = [...new Set([...a.content.classes.map((c) => c.id), ...b.content.classes.map((c) => c.id)])].sort();
    const inA = new Set(a.content.classes.map((c) => c.id));
    const inB = new Set(b.content.classes.map((c) => c.id));
    for (const id of ids) pairs.push([inA.has(id) ? id : undefined, inB.has(id) ? id : undefined]);
  }
  const types = opts.types ?? XDS_TYPES;
  const cache = new Map<string, Promise<readonly FieldChange[]>>();
  const out: ClassDiff[] = [];
  for (const [ia, ib] of pairs) {
    const ra = ia !== undefined ? resourcesForClass(a.content, ia) : undefined;
    const rb = ib !== undefined ? resourcesForClass(b.content, ib) : undefined;
    const perType: Partial<Record<XdsType, TypeDiff>> = {};
    for (const type of types) {
      const ma = ra?.[type] ?? new Map<string, string>();
      const mb = rb?.[type] ?? new Map<string, string>();
      const added = [...mb.keys()].filter((n) => !ma.has(n));
      const removed = [...ma.keys()].filter((n) => !mb.has(n));
      const changed: ChangedResource[] = [];
      for (const [name, da] of ma) {
        const db = mb.get(name);
        if (db === undefined || db === da) continue;
        const key = `${type}\n${da}\n${db}`;
        let fields = cache.get(key);
        if (!fields) cache.set(key, (fields = fieldChanges(type, da, db, a.getObject, b.getObject)));
        changed.push({ name, fields: await fields });
      }
      if (added.length + removed.length + changed.length > 0) perType[type] = { added, removed, changed };
    }
    if (Object.keys(perType).length > 0)
      out.push({
        ...(ia !== undefined ? { classA: ia } : {}),
        ...(ib !== undefined ? { classB: ib } : {}),
        types: perType,
      });
  }
  return out;
}

async function fieldChanges(
  type: XdsType,
  da: string,
  db: string,
  readA: ObjectReader,
  readB: ObjectReader,
): Promise<readonly FieldChange[]> {
  return diffJson(await decode(type, da, readA), await decode(type, db, readB), xdsKeyOf);
}

async function decode(type: XdsType, digest: string, read: ObjectReader): Promise<Json> {
  const bytes = await read(digest);
  if (!bytes) throw new HistoryError(`object ${digest} is missing from the store`, 'internal');
  return resourceToJson(XDS_TYPE_NAME[type], bytes) as Json;
}

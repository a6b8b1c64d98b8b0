/**
 * An in-memory ServedSnapshot for the relay's protocol tests, built from a compiled bookinfo
 * (the real loader is src/relay/snapshot/…). `derive` makes a next version with edited resources.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { classifyNode, resourcesForClass } from '../../src/snapshot/classify.js';
import type { BuiltSnapshot } from '../../src/snapshot/build.js';
import type { Placement, ServedResource, ServedSnapshot } from '../../src/relay/types.js';
import { XDS_TYPES, type XdsType } from '../../src/xds/type-urls.js';
import { compileFiles } from '../helpers/mesh.js';
import { BOOKINFO_STATE, ISTIO_SAMPLES } from '../helpers/paths.js';

type Table = Map<string, Record<XdsType, Map<string, ServedResource>>>;

export class MemorySnapshot implements ServedSnapshot {
  private readonly versions = new Map<string, string>();

  constructor(
    readonly version: number,
    readonly digest: string,
    private readonly place: (node: { id: string; metadata: Readonly<Record<string, unknown>> }) => Placement,
    readonly table: Table,
  ) {}

  classify(node: { readonly id: string; readonly metadata: Readonly<Record<string, unknown>> }): Placement {
    return this.place(node);
  }

  resources(classId: string, type: XdsType): ReadonlyMap<string, ServedResource> | undefined {
    return this.table.get(classId)?.[type];
  }

  typeVersion(classId: string, type: XdsType): string {
    const key = `${classId}\0${type}`;
    let v = this.versions.get(key);
    if (v === undefined) {
      const h = createHash('sha256');
      for (const r of [...(this.resources(classId, type)?.values() ?? [])].sort((a, b) => (a.name < b.name ? -1 : 1)))
        h.update(`${r.name}\0${r.digest}\n`);
      v = h.digest('hex').slice(0, 12);
      this.versions.set(key, v);
    }
    return v;
  }

  verifiedSecrets(): ReadonlySet<string> {
    return new Set();
  }

  /** A next version: `edit` may change each class's resources of a type. */
  derive(
    version: number,
    edit: (classId: string, type: XdsType, resources: Map<string, ServedResource>) => void,
  ): MemorySnapshot {
    const table: Table = new Map();
    for (const [classId, types] of this.table) {
      const copy = {} as Record<XdsType, Map<string, ServedResource>>;
      for (const type of XDS_TYPES) {
        copy[type] = new Map(types[type]);
        edit(classId, type, copy[type]);
      }
      table.set(classId, copy);
    }
    return new MemorySnapshot(version, `sha256:derived-${version}`, this.place, table);
  }
}

export function fromBuilt(built: BuiltSnapshot, version: number): MemorySnapshot {
  const { content, objects } = built;
  const table: Table = new Map();
  for (const cls of content.classes) {
    const digests = resourcesForClass(content, cls.id);
    if (!digests) continue;
    const types = {} as Record<XdsType, Map<string, ServedResource>>;
    for (const type of XDS_TYPES) {
      types[type] = new Map();
      for (const [name, digest] of digests[type]) {
        const bytes = objects.get(digest);
        if (!bytes) throw new Error(`object ${digest} missing`);
        types[type].set(name, { name, digest, bytes });
      }
    }
    table.set(cls.id, types);
  }
  const place = (node: { id: string; metadata: Readonly<Record<string, unknown>> }): Placement => {
    const c = classifyNode(content, node);
    return c.ok ? { ok: true, classId: c.classId } : { ok: false, reason: c.reason };
  };
  return new MemorySnapshot(version, built.digest, place, table);
}

const NET = join(ISTIO_SAMPLES, 'bookinfo', 'networking');

let cached: MemorySnapshot | undefined;
/** Bookinfo with all destination rules, as snapshot version 1 (compiled once per process). */
export function bookinfo(): MemorySnapshot {
  cached ??= fromBuilt(compileFiles([BOOKINFO_STATE, join(NET, 'destination-rule-all.yaml')]).snapshot, 1);
  return cached;
}

/** A changed copy of a resource (same bytes, new digest): enough for the protocol. */
export const bumped = (r: ServedResource, tag: string): ServedResource => ({ ...r, digest: `${r.digest}-${tag}` });

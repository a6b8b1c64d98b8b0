/**
 * A verified snapshot held in memory, in the shape the xDS server serves from: per class and type,
 * a name → ServedResource map and its version string.
 *
 * Memory: each object's bytes are held once (keyed by digest), each (name, digest) pair becomes one
 * ServedResource shared by every class that gets it, and classes with the same group list share
 * their maps outright.
 */
import type { SnapshotContent } from '../../snapshot/content.js';
import { classifyNode } from '../../snapshot/classify.js';
import { XDS_TYPES, type XdsType } from '../../xds/type-urls.js';
import type { Placement, ServedResource, ServedSnapshot } from '../types.js';
import { typeVersionOf } from './type-version.js';

interface TypeTable {
  readonly resources: ReadonlyMap<string, ServedResource>;
  readonly version: string;
}
type ClassTables = Readonly<Record<XdsType, TypeTable>>;

export interface LoadedSnapshotInit {
  readonly channel: string;
  readonly version: number;
  readonly digest: string;
  readonly content: SnapshotContent;
  /** Every object any group references, by digest, already verified. */
  readonly objects: ReadonlyMap<string, Uint8Array>;
  readonly loadedAt?: Date;
}

export class MissingObjectError extends Error {
  override readonly name = 'MissingObjectError';
}

export class LoadedSnapshot implements ServedSnapshot {
  readonly channel: string;
  readonly version: number;
  readonly digest: string;
  readonly content: SnapshotContent;
  readonly loadedAt: Date;
  /** Verified bytes by digest (reused by the next load for objects it shares). */
  readonly objects: ReadonlyMap<string, Uint8Array>;
  private readonly classes = new Map<string, ClassTables>();

  constructor(init: LoadedSnapshotInit) {
    this.channel = init.channel;
    this.version = init.version;
    this.digest = init.digest;
    this.content = init.content;
    this.objects = init.objects;
    this.loadedAt = init.loadedAt ?? new Date();

    const pool = new Map<string, ServedResource>();
    const byGroups = new Map<string, ClassTables>();
    for (const cls of init.content.classes) {
      const key = cls.groups.join('\n');
      let tables = byGroups.get(key);
      if (!tables) {
        tables = this.buildTables(cls.groups, pool);
        byGroups.set(key, tables);
      }
      this.classes.set(cls.id, tables);
    }
  }

  classify(node: { readonly id: string; readonly metadata: Readonly<Record<string, unknown>> }): Placement {
    const placed = classifyNode(this.content, { id: node.id, metadata: node.metadata });
    if (placed.ok) return { ok: true, classId: placed.classId };
    // classifyNode's reasons: a node id that does not parse is the client's mistake; a well-formed
    // node the snapshot has no class for is "not found" (it may exist in a later snapshot).
    const code = placed.reason.startsWith('malformed node id') ? 'invalid-argument' : 'not-found';
    return { ok: false, reason: placed.reason, code };
  }

  resources(classId: string, type: XdsType): ReadonlyMap<string, ServedResource> | undefined {
    return this.classes.get(classId)?.[type].resources;
  }

  typeVersion(classId: string, type: XdsType): string {
    return this.classes.get(classId)?.[type].version ?? '';
  }

  get classIds(): readonly string[] {
    return [...this.classes.keys()];
  }

  /** Total bytes of the distinct objects held. */
  get objectBytes(): number {
    let n = 0;
    for (const b of this.objects.values()) n += b.byteLength;
    return n;
  }

  private buildTables(groups: readonly string[], pool: Map<string, ServedResource>): ClassTables {
    const out = {} as Record<XdsType, TypeTable>;
    for (const type of XDS_TYPES) {
      const pairs: [string, ServedResource][] = [];
      for (const g of groups) {
        const table = this.content.groups[g]?.[type];
        if (!table) continue;
        for (const [name, digest] of Object.entries(table)) pairs.push([name, this.resource(pool, name, digest)]);
      }
      pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      const resources = new Map(pairs);
      out[type] = { resources, version: typeVersionOf(resources) };
    }
    return out;
  }

  private resource(pool: Map<string, ServedResource>, name: string, digest: string): ServedResource {
    const key = `${digest} ${name}`;
    let r = pool.get(key);
    if (!r) {
      const bytes = this.objects.get(digest);
      if (!bytes) throw new MissingObjectError(`snapshot ${this.digest}: object ${digest} (${name}) was not loaded`);
      r = Object.freeze({ name, digest, bytes });
      pool.set(key, r);
    }
    return r;
  }
}

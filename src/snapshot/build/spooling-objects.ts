/**
 * Where the SnapshotBuilder's full build puts the objects it encodes. Without a spool, a map in
 * memory; with one (object-spool.ts), each digest's bytes are appended to the spool when first
 * given, so a watcher's first round does not hold every object's bytes at once until its publish.
 */
import { DigestSorter } from '../sorted-digests.js';
import { appendObject, SpooledObjects, type ObjectSpool } from './object-spool.js';

/** What a commit adds objects to: a Map, or a SpoolingObjects. */
export interface ObjectTarget {
  has(digest: string): boolean;
  set(digest: string, bytes: Uint8Array): unknown;
}

/** Objects appended to a spool once per digest; listed, sorted by digest, as SpooledObjects. */
export class SpoolingObjects implements ObjectTarget {
  private readonly handles = new Map<string, number>();

  constructor(private readonly spool: ObjectSpool) {}

  has(digest: string): boolean {
    return this.handles.has(digest);
  }

  /** The same digest is the same bytes: appended the first time only, to its digest's group (read back in digest order). */
  set(digest: string, bytes: Uint8Array): this {
    if (!this.handles.has(digest)) this.handles.set(digest, appendObject(this.spool, digest, bytes));
    return this;
  }

  /** Where a digest's bytes are in the spool (undefined: not given). */
  handle(digest: string): number | undefined {
    return this.handles.get(digest);
  }

  /** The objects given, sorted by digest, read back from the spool when asked. */
  sorted(): SpooledObjects {
    const sorter = new DigestSorter<number>();
    for (const [digest, handle] of this.handles) sorter.add(digest, handle);
    return new SpooledObjects(this.spool, sorter.toMap());
  }
}

/**
 * Reference counts of the objects a snapshot holds: per type, the distinct resource digests; per
 * object, how many resources hold it; per part of a composite object (composite.ts), how many
 * composites hold it. An object is stored while something holds it.
 */
import type { XdsType } from '../../xds/type-urls.js';
import type { EncodedResource } from '../encoder.js';
import { DigestSorter, digestOrder } from '../sorted-digests.js';

/** An object held: by how many resources in all, and of each type (identical bytes may be two types' resources). */
interface Held extends Record<XdsType, number> {
  count: number;
  readonly encoded: EncodedResource;
}

export class ObjectRefs {
  /** Per type, how many distinct objects resources of that type hold. */
  private readonly distinct: Record<XdsType, number> = { clusters: 0, endpoints: 0, listeners: 0, routes: 0 };
  private readonly objects = new Map<string, Held>();
  /** Parts of the composite objects in `objects`: digest → how many composites hold it. */
  private readonly parts = new Map<string, { count: number; bytes: Uint8Array }>();

  /**
   * One more resource holds `encoded`; what it brings new to the snapshot (it and its parts) goes to
   * `added`, when given (a full build lists every object with `sortedAll` instead).
   */
  hold(type: XdsType, encoded: EncodedResource, added?: Map<string, Uint8Array>): void {
    if (!this.count(type, encoded.digest, encoded)) return;
    added?.set(encoded.digest, encoded.bytes);
    for (const part of encoded.parts ?? []) {
      const r = this.parts.get(part.digest);
      if (r) r.count++;
      else {
        this.parts.set(part.digest, { count: 1, bytes: part.bytes });
        added?.set(part.digest, part.bytes);
      }
    }
  }

  /** One resource less holds the object `digest`. */
  release(type: XdsType, digest: string): void {
    this.count(type, digest, undefined);
  }

  /** Every object held, and every part of them, sorted by digest. */
  sortedAll(): Map<string, Uint8Array> {
    const sorter = new DigestSorter<Uint8Array>();
    for (const [digest, o] of this.objects) sorter.add(digest, o.encoded.bytes);
    for (const [digest, p] of this.parts) if (!this.objects.has(digest)) sorter.add(digest, p.bytes);
    return sorter.toMap();
  }

  /** Distinct resources per type, and distinct objects (parts aside). */
  sizes(): Record<XdsType, number> & { readonly objects: number } {
    return { ...this.distinct, objects: this.objects.size };
  }

  /**
   * True when the object is new. `encoded` undefined: a release. A resource's name is part of its
   * bytes (every xDS type encodes it), so distinct (name, digest) pairs of a type are its distinct digests.
   */
  private count(type: XdsType, digest: string, encoded: EncodedResource | undefined): boolean {
    const o = this.objects.get(digest);
    if (encoded) {
      if (o) {
        o.count++;
        if (o[type]++ === 0) this.distinct[type]++;
        return false;
      }
      const held: Held = { count: 1, encoded, clusters: 0, endpoints: 0, listeners: 0, routes: 0 };
      held[type] = 1;
      this.objects.set(digest, held);
      this.distinct[type]++;
      return true;
    }
    if (!o || o[type] === 0) return false; // not held by a resource of this type
    if (--o[type] === 0) this.distinct[type]--;
    if (--o.count === 0) {
      this.objects.delete(digest);
      for (const part of o.encoded.parts ?? []) {
        const r = this.parts.get(part.digest);
        if (r && --r.count === 0) this.parts.delete(part.digest);
      }
    }
    return false;
  }
}

const TYPE_BIT: Readonly<Record<XdsType, number>> = { clusters: 1, endpoints: 2, listeners: 4, routes: 8 };

/**
 * What `ObjectRefs` tells a build that only adds (the one-shot build): the objects and their parts,
 * distinct per type, without a counter object per object — per digest, one small integer (the
 * types of the resources holding it; 0: only a part of composites) and its bytes.
 */
export class ObjectSet {
  private readonly distinct: Record<XdsType, number> = { clusters: 0, endpoints: 0, listeners: 0, routes: 0 };
  private objectCount = 0;
  /** Digest → position in the columns below. */
  private readonly at = new Map<string, number>();
  private readonly digests: string[] = [];
  private readonly bytes: Uint8Array[] = [];
  private readonly types: number[] = [];

  /** A resource of `type` holds `encoded` (its parts are kept as new entries the first time). */
  hold(type: XdsType, encoded: EncodedResource): void {
    const bit = TYPE_BIT[type];
    const i = this.at.get(encoded.digest);
    const had = i === undefined ? 0 : (this.types[i] as number);
    if (had & bit) return;
    this.distinct[type]++;
    if (i !== undefined) this.types[i] = had | bit;
    else this.push(encoded.digest, encoded.bytes, bit);
    if (had !== 0) return;
    this.objectCount++; // new, or a part so far
    for (const part of encoded.parts ?? []) if (!this.at.has(part.digest)) this.push(part.digest, part.bytes, 0);
  }

  /** Every object held, and every part of them, sorted by digest. */
  sortedAll(): Map<string, Uint8Array> {
    const out = new Map<string, Uint8Array>();
    for (const i of digestOrder(this.digests)) out.set(this.digests[i] as string, this.bytes[i] as Uint8Array);
    return out;
  }

  /** Distinct resources per type, and distinct objects (parts aside). */
  sizes(): Record<XdsType, number> & { readonly objects: number } {
    return { ...this.distinct, objects: this.objectCount };
  }

  private push(digest: string, bytes: Uint8Array, types: number): void {
    this.at.set(digest, this.digests.length);
    this.digests.push(digest);
    this.bytes.push(bytes);
    this.types.push(types);
  }
}

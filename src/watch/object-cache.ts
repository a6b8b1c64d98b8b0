/**
 * The watcher's view of the cluster: every object the informers hold, canonicalized (server noise
 * stripped, src/snapshot/stored-inputs/) and content-addressed. An event whose canonical form is
 * unchanged (a Node heartbeat, a Pod status field the compiler never reads) is not a change.
 *
 * One representation per object: an entry keeps the canonical JSON bytes (what the store and the
 * inputs tree need) and the digest; the canonical object is parsed from the bytes on each read and
 * not kept. Each object is read (validated) once, on arrival: when that reading gave a value
 * without any diagnostic, the entry keeps it and the compiler's InputSet takes that same value
 * (src/inputs/load.ts ReadDocument) instead of reading the object again.
 */
import type { ObjectRead } from '../inputs/load.js';
import {
  keyString,
  objectKeyOf,
  storedEntryRead,
  type InputLayer,
  type ObjectKey,
  type Raw,
  type StoredObject,
} from '../snapshot/stored-inputs/index.js';
import type { Hasher } from '../snapshot/digest.js';
import { lastFieldManager } from './field-manager.js';

export interface CachedObject extends StoredObject {
  /** The API server's resourceVersion of this version. */
  readonly resourceVersion?: string;
  /** Its metadata.generation (the spec's version), where the server keeps one: a status's observedGeneration. */
  readonly generation?: number;
  /** Its value for the InputSet, read on arrival (valid, without diagnostics); undefined: read it from `object`. */
  readonly read?: ObjectRead | undefined;
}

export type { Raw };

export interface CacheChange {
  readonly key: ObjectKey;
  readonly change: 'added' | 'modified' | 'deleted';
  readonly resourceVersion?: string;
  /** The field manager of the newest write (field-manager.ts), for an add or modify. */
  readonly manager?: string;
}

export function resourceVersionOf(raw: Raw): string | undefined {
  const meta = raw.metadata as Raw | undefined;
  const rv = meta && typeof meta === 'object' ? meta.resourceVersion : undefined;
  return typeof rv === 'string' ? rv : undefined;
}

export function generationOf(raw: Raw): number | undefined {
  const meta = raw.metadata as Raw | undefined;
  const g = meta && typeof meta === 'object' ? meta.generation : undefined;
  return typeof g === 'number' ? g : undefined;
}

const decoder = new TextDecoder();

/** A cached object: bytes and digest kept, the canonical object parsed on read (a fresh copy each time). */
class CacheEntry implements CachedObject {
  declare readonly resourceVersion?: string;
  declare readonly generation?: number;

  constructor(
    readonly key: ObjectKey,
    readonly layer: InputLayer,
    readonly bytes: Uint8Array,
    readonly digest: string,
    readonly read: ObjectRead | undefined,
    resourceVersion: string | undefined,
    generation: number | undefined,
  ) {
    if (resourceVersion !== undefined) this.resourceVersion = resourceVersion;
    if (generation !== undefined) this.generation = generation;
  }

  get object(): Raw {
    return JSON.parse(decoder.decode(this.bytes)) as Raw;
  }
}

export class ObjectCache {
  private readonly objects = new Map<string, CachedObject>();

  constructor(private readonly hasher?: Hasher) {}

  /** Adds or replaces an object; undefined when nothing the compiler reads changed. */
  upsert(raw: Raw): CacheChange | undefined {
    const { entry: stored, read } = storedEntryRead(raw, this.hasher) ?? {};
    if (!stored) return undefined;
    const k = keyString(stored.key);
    const prev = this.objects.get(k);
    const same = prev !== undefined && prev.digest === stored.digest;
    const resourceVersion = resourceVersionOf(raw);
    const next = new CacheEntry(
      stored.key,
      stored.layer,
      stored.bytes,
      stored.digest,
      // Unchanged content: the value the InputSet already holds, not a second copy of it.
      same ? prev.read : read,
      resourceVersion,
      generationOf(raw),
    );
    this.objects.set(k, next);
    if (same) return undefined;
    const manager = lastFieldManager(raw);
    return {
      key: stored.key,
      change: prev ? 'modified' : 'added',
      ...(resourceVersion !== undefined ? { resourceVersion } : {}),
      ...(manager !== undefined ? { manager } : {}),
    };
  }

  /** Only the key is read: a delete may carry the informer's last copy, or a bare name. */
  remove(raw: Raw): CacheChange | undefined {
    const key = objectKeyOf(raw);
    if (!key) return undefined;
    const k = keyString(key);
    const prev = this.objects.get(k);
    if (!prev) return undefined;
    this.objects.delete(k);
    const resourceVersion = resourceVersionOf(raw) ?? prev.resourceVersion;
    return { key: prev.key, change: 'deleted', ...(resourceVersion !== undefined ? { resourceVersion } : {}) };
  }

  get(key: string): CachedObject | undefined {
    return this.objects.get(key);
  }

  values(): IterableIterator<CachedObject> {
    return this.objects.values();
  }

  /** Each object under its key string (`keyString(o.key)`). */
  entries(): IterableIterator<[string, CachedObject]> {
    return this.objects.entries();
  }

  get size(): number {
    return this.objects.size;
  }
}

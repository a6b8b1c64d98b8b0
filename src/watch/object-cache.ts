/**
 * The watcher's view of the cluster: every object the informers hold, canonicalized (server noise
 * stripped, src/snapshot/stored-inputs/) and content-addressed. An event whose canonical form is
 * unchanged (a Node heartbeat, a Pod status field the compiler never reads) is not a change.
 */
import {
  keyString,
  storedObject,
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

export class ObjectCache {
  private readonly objects = new Map<string, CachedObject>();

  constructor(private readonly hasher?: Hasher) {}

  /** Adds or replaces an object; undefined when nothing the compiler reads changed. */
  upsert(raw: Raw): CacheChange | undefined {
    const stored = storedObject(raw, this.hasher);
    if (!stored) return undefined;
    const k = keyString(stored.key);
    const prev = this.objects.get(k);
    const resourceVersion = resourceVersionOf(raw);
    const generation = generationOf(raw);
    // Onto the fresh object, not a spread copy: a spread would run its parse-on-first-read getter.
    const next: CachedObject = Object.assign(
      stored,
      resourceVersion !== undefined ? { resourceVersion } : {},
      generation !== undefined ? { generation } : {},
    );
    this.objects.set(k, next);
    if (prev && prev.digest === next.digest) return undefined;
    const manager = lastFieldManager(raw);
    return {
      key: stored.key,
      change: prev ? 'modified' : 'added',
      ...(resourceVersion !== undefined ? { resourceVersion } : {}),
      ...(manager !== undefined ? { manager } : {}),
    };
  }

  remove(raw: Raw): CacheChange | undefined {
    const stored = storedObject(raw, this.hasher);
    if (!stored) return undefined;
    const k = keyString(stored.key);
    const prev = this.objects.get(k);
    if (!prev) return undefined;
    this.objects.delete(k);
    const resourceVersion = resourceVersionOf(raw) ?? prev.resourceVersion;
    return { key: stored.key, change: 'deleted', ...(resourceVersion !== undefined ? { resourceVersion } : {}) };
  }

  get(key: string): CachedObject | undefined {
    return this.objects.get(key);
  }

  values(): IterableIterator<CachedObject> {
    return this.objects.values();
  }

  get size(): number {
    return this.objects.size;
  }
}

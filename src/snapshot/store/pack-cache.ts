/**
 * A bounded cache of decoded packs for a long-running publisher (the watcher): the next publish
 * merges its delta into the newest pack it wrote, and reads it from here instead of the store. A
 * pack is content-addressed: the entries under a digest never change.
 */
import { LRUCache } from 'lru-cache';
import type { PackCache, PackEntries } from './packs.js';

/** A PackCache of at most `maxBytes` of pack bytes (default 16 MiB), least recently used out first. */
export function newPackCache(maxBytes = 16 << 20): PackCache {
  const cache = new LRUCache<string, { readonly entries: PackEntries; readonly bytes: number }>({
    maxSize: maxBytes,
    sizeCalculation: (p) => Math.max(1, p.bytes),
  });
  return {
    get: (digest) => cache.get(digest)?.entries,
    remember: (digest, entries, bytes) => {
      if (bytes <= maxBytes) cache.set(digest, { entries, bytes });
    },
  };
}

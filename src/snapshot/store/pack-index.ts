/**
 * Finding a document or object held only inside a pack. A big publish writes its new entries
 * into its pack and nowhere else (publish.ts), so a store's `getObject`/`getDocument` look here
 * when no loose key holds the digest (and first of all in the packs already in memory: no I/O).
 *
 * The lookup path is the version records: a record's packs hold its whole snapshot (the invariant
 * in packs.ts), so an entry any stored record reaches is in a pack some record names. A store
 * handle notes every record it reads or publishes (readers mostly start from one, so the packs
 * they need are known before the first miss); a miss no noted pack answers lists the channels'
 * records once more, reading only records not seen before. A pack is read once (its own digest
 * checked by the store), its entry list kept, its bytes kept in a bounded cache; every entry
 * returned is checked against its digest. Packs only a killed publisher wrote are named by no
 * record and never trusted; a pack gc deleted is forgotten when it is found missing.
 *
 * Pure (no node:*): the object store uses it in workerd too.
 */
import { LRUCache } from 'lru-cache';
import { digestOf, type Hasher } from '../digest.js';
import type { VersionRecord } from '../manifest.js';
import { decodePack, type PackEntries } from './pack-format.js';
import { packDigests } from './pack-policy.js';
import { CorruptObjectError } from './store.js';

/** What the index needs of its store: loose pack reads (digest-checked) and the version records. */
export interface PackIndexSource {
  readPack(digest: string): Promise<Uint8Array | null>;
  listChannels(): Promise<string[]>;
  listVersions(channel: string): Promise<number[]>;
  /** Reads a record; the store notes it in the index (`note`) as it does for every record it reads. */
  getVersion(channel: string, version: number): Promise<VersionRecord | null>;
}

/** Decoded pack bytes kept at most (the newest pack read is kept whatever its size). */
const CACHE_BYTES = 64 << 20;

export class PackIndex {
  /** Entry digest → the packs holding it, in the order they were listed. */
  private readonly holders = new Map<string, string[]>();
  /** Packs named by a noted record whose entries are not listed yet. */
  private readonly unlisted = new Set<string>();
  private readonly listed = new Set<string>();
  private readonly seenVersions = new Map<string, Set<number>>();
  private readonly cache = new LRUCache<string, { readonly entries: PackEntries; readonly bytes: number }>({
    maxSize: CACHE_BYTES,
    sizeCalculation: (p) => Math.max(1, p.bytes),
  });
  private newest: { readonly digest: string; readonly entries: PackEntries } | undefined;
  private readonly loading = new Map<string, Promise<PackEntries | null>>();
  /** Record listings started, and the one under way. */
  private listings = 0;
  private listing: { readonly n: number; readonly done: Promise<void> } | undefined;

  constructor(
    private readonly source: PackIndexSource,
    private readonly hasher: Hasher,
  ) {}

  /** A record the store read or wrote: its packs may hold entries no loose key does. */
  note(record: Pick<VersionRecord, 'packs'>, where?: { readonly channel: string; readonly version: number }): void {
    if (where) this.versionsOf(where.channel).add(where.version);
    for (const p of packDigests(record)) if (!this.listed.has(p)) this.unlisted.add(p);
  }

  /**
   * The entry's bytes when a pack whose entries are in memory holds it (checked against `digest`),
   * else null: no I/O. A reader following a channel asks here first, so the entries of the pack it
   * has just read cost no failed loose read each (a new version's documents and objects).
   */
  getInMemory(digest: string): Uint8Array | null {
    for (const pack of this.holders.get(digest) ?? []) {
      const entries = this.newest?.digest === pack ? this.newest.entries : this.cache.peek(pack)?.entries;
      const bytes = entries?.get(digest);
      if (bytes) return this.checked(digest, bytes, pack);
    }
    return null;
  }

  /** The entry's bytes from a pack a stored record names, checked against `digest`, or null. */
  async get(digest: string): Promise<Uint8Array | null> {
    const wanted = this.listings + 1; // a listing started from now on may name a pack not yet known
    let listed = false;
    for (;;) {
      const found = await this.fromKnown(digest);
      if (found) return found;
      if (this.unlisted.size > 0) {
        // Newest first (a record's deltas after its checkpoint, later records after earlier ones):
        // a reader following new versions finds their entries without reading a big checkpoint.
        for (const pack of [...this.unlisted].reverse()) {
          await this.load(pack);
          this.unlisted.delete(pack); // listed now, or gone
          const found = await this.fromKnown(digest);
          if (found) return found;
        }
        continue;
      }
      if (listed) return null;
      await this.listRecords(wanted);
      listed = true;
    }
  }

  private async fromKnown(digest: string): Promise<Uint8Array | null> {
    for (const pack of [...(this.holders.get(digest) ?? [])]) {
      const entries = await this.load(pack);
      const bytes = entries?.get(digest);
      if (bytes) return this.checked(digest, bytes, pack);
    }
    return null;
  }

  /** A pack entry's bytes, once they are shown to have the digest they are filed under. */
  private checked(digest: string, bytes: Uint8Array, pack: string): Uint8Array {
    const actual = digestOf(bytes, this.hasher);
    if (actual !== digest) throw new CorruptObjectError(digest, actual, `pack ${pack}`);
    return bytes;
  }

  /** A pack's entries (unverified: each is checked when returned), or null when it is gone. */
  private load(pack: string): Promise<PackEntries | null> {
    const kept = this.newest?.digest === pack ? this.newest.entries : this.cache.get(pack)?.entries;
    if (kept) return Promise.resolve(kept);
    let loading = this.loading.get(pack);
    if (!loading) {
      loading = this.read(pack).finally(() => this.loading.delete(pack));
      this.loading.set(pack, loading);
    }
    return loading;
  }

  private async read(pack: string): Promise<PackEntries | null> {
    const bytes = await this.source.readPack(pack);
    this.unlisted.delete(pack);
    if (!bytes) {
      this.forget(pack);
      return null;
    }
    const entries = decodePack(bytes, this.hasher, false);
    if (!this.listed.has(pack)) {
      this.listed.add(pack);
      for (const d of entries.keys()) {
        const holders = this.holders.get(d);
        if (holders) holders.push(pack);
        else this.holders.set(d, [pack]);
      }
    }
    this.newest = { digest: pack, entries };
    this.cache.set(pack, { entries, bytes: bytes.byteLength });
    return entries;
  }

  /** A pack found missing (gc deleted it): its entries are looked for elsewhere. */
  private forget(pack: string): void {
    if (!this.listed.delete(pack)) return;
    for (const [d, holders] of this.holders) {
      const rest = holders.filter((p) => p !== pack);
      if (rest.length === 0) this.holders.delete(d);
      else if (rest.length !== holders.length) this.holders.set(d, rest);
    }
  }

  /** Waits for a listing of the records that started at or after the `wanted`-th. */
  private async listRecords(wanted: number): Promise<void> {
    for (;;) {
      const current = this.listing;
      if (current && current.n >= wanted) return current.done;
      if (current) {
        await current.done.catch(() => undefined);
        continue;
      }
      const n = ++this.listings;
      const done = this.readNewRecords().finally(() => {
        if (this.listing?.n === n) this.listing = undefined;
      });
      this.listing = { n, done };
      return done;
    }
  }

  private async readNewRecords(): Promise<void> {
    for (const channel of await this.source.listChannels()) {
      const seen = this.versionsOf(channel);
      for (const version of await this.source.listVersions(channel)) {
        if (seen.has(version)) continue;
        const record = await this.source.getVersion(channel, version);
        if (record) this.note(record, { channel, version });
      }
    }
  }

  private versionsOf(channel: string): Set<number> {
    let seen = this.seenVersions.get(channel);
    if (!seen) this.seenVersions.set(channel, (seen = new Set()));
    return seen;
  }
}

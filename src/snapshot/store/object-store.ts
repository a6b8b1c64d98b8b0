/**
 * The SnapshotStore contract over object storage (S3, R2: see blob.ts): layout.ts's keys under a
 * prefix, channels run by channel-head.ts (the head moved by compare-and-swap on its ETag).
 *
 * Safety comes from the server's conditional writes, not from locks: immutable keys are written
 * with If-None-Match: * (a taken version number moves on to the next one, so two writers never
 * share a version), and the head with If-Match on the ETag read just before (a writer that lost
 * the race re-reads, and gives up only when the head already is newer). Each key is written in
 * one PUT, which object stores make visible atomically, and publish.ts writes objects, documents,
 * the version record and the head in that order: a crash leaves unreferenced keys, never a head
 * on a half-written snapshot. Pure (no node:*): it also runs in workerd over an R2 binding.
 */
import { auditBatchBytes, auditDay, isRelayBatch, parseAuditBatch, type AuditRecord } from '../audit.js';
import { readSnapshotContent, type SnapshotContent } from '../content.js';
import { digestOf, nobleSha256Hex, type Hasher } from '../digest.js';
import {
  assertChannel,
  parseVersionRecord,
  type ChannelHead,
  type VersionDraft,
  type VersionRecord,
} from '../manifest.js';
import type { Blob, BlobBackend } from './blob.js';
import { appendVersion, assertNotHead, parseHead, readChannelHead, type ChannelSlots } from './channel-head.js';
import { PackIndex } from './pack-index.js';
import { CorruptObjectError, DigestMismatchError, type SnapshotStore, type StoredEntry } from './store.js';
import { assertDigests, forEachLimited } from './concurrent.js';
import {
  AUDIT_PREFIX,
  auditDayOfKey,
  auditKey,
  CHANNELS_PREFIX,
  channelOfVersionKey,
  digestOfName,
  documentKey,
  DOCUMENTS_PREFIX,
  DOCUMENT_SUFFIX,
  headKey,
  mustHex,
  numberedNames,
  objectKey,
  OBJECTS_PREFIX,
  stateKey,
  statePrefix,
  versionKey,
  versionsPrefix,
} from './layout.js';

export interface ObjectStoreOptions {
  readonly hasher?: Hasher;
  /** Head compare-and-swap attempts before HeadConflictError (default 16). */
  readonly headAttempts?: number;
  /**
   * A reused object or document older than this (ms, default 10 min) gets its modification time
   * refreshed (one copy-onto-itself request), so gc's grace period counts from its last reuse.
   * Younger ones are not touched again, which bounds the extra requests; gc's grace period must
   * exceed this plus the longest publish (gc checks it). 0 touches on every reuse.
   */
  readonly freshenAfterMs?: number;
  /** The local clock (tests). */
  readonly now?: () => number;
}

/** Default for ObjectStoreOptions.freshenAfterMs (gc refuses a grace period shorter than the store's freshenAfterMs). */
const FRESHEN_AFTER_MS = 600_000;

const decoder = new TextDecoder();

export class ObjectStore implements SnapshotStore {
  private readonly hasher: Hasher;
  private readonly headAttempts: number;
  readonly freshenAfterMs: number;
  private readonly now: () => number;
  private auditSeq = 0;
  /** Entries held only in packs (pack-index.ts). */
  private readonly packed: PackIndex;
  /** The channel algorithms' calls (channel-head.ts), one request each. */
  private readonly slots: ChannelSlots = {
    readHead: async (channel) => {
      const blob = await this.backend.get(headKey(channel));
      return blob && { head: parseHead(decoder.decode(blob.bytes)), etag: blob.etag };
    },
    hasVersion: (channel, n) => this.backend.exists(versionKey(channel, n)),
    listVersions: (channel) => this.listVersions(channel),
    getVersion: (channel, n) => this.getVersion(channel, n),
    createVersion: (channel, n, bytes) => this.backend.putIfAbsent(versionKey(channel, n), bytes),
    swapHead: async (channel, bytes, etag) => {
      if (etag !== null) return this.backend.putIfMatch(headKey(channel), bytes, etag);
      return (await this.backend.putIfAbsent(headKey(channel), bytes)) === 'created' ? 'ok' : 'conflict';
    },
  };

  constructor(
    readonly backend: BlobBackend,
    private readonly opts: ObjectStoreOptions = {},
  ) {
    this.hasher = opts.hasher ?? nobleSha256Hex;
    this.headAttempts = opts.headAttempts ?? 16;
    this.freshenAfterMs = opts.freshenAfterMs ?? FRESHEN_AFTER_MS;
    this.now = opts.now ?? Date.now;
    this.packed = new PackIndex(
      {
        readPack: (d) => this.verifiedRead(d, objectKey(d)),
        listChannels: () => this.listChannels(),
        listVersions: (c) => this.listVersions(c),
        getVersion: (c, n) => this.getVersion(c, n),
      },
      this.hasher,
    );
  }

  toString(): string {
    return this.backend.url;
  }

  async putObject(digest: string, bytes: Uint8Array): Promise<'created' | 'exists'> {
    const key = objectKey(digest);
    const actual = digestOf(bytes, this.hasher);
    if (actual !== digest) throw new DigestMismatchError(digest, actual);
    for (let attempt = 1; ; attempt++) {
      if ((await this.backend.putIfAbsent(key, bytes)) === 'created') return 'created';
      const found = await this.verifiedBlob(digest, key); // a 412: what is there must be the same bytes
      if (found && (this.isFresh(found.modifiedAt) || (await this.backend.touch(key)))) return 'exists';
      vanished(key, attempt); // gc deleted it just now: write it again
    }
  }

  uncached(): ObjectStore {
    return new ObjectStore(this.backend, this.opts);
  }

  async getObject(digest: string): Promise<Uint8Array | null> {
    return (
      this.packed.getInMemory(digest) ?? (await this.verifiedRead(digest, objectKey(digest))) ?? this.packed.get(digest)
    );
  }

  async hasObject(digest: string): Promise<boolean> {
    return this.freshen(objectKey(digest));
  }

  async putDocuments(documents: ReadonlyMap<string, Uint8Array>): Promise<string[]> {
    const pending = [...documents];
    assertDigests(pending, this.hasher);
    const written: string[] = [];
    await forEachLimited(pending, 16, async ([digest, bytes]) => {
      if ((await this.putOrReuse(documentKey(digest), bytes)) === 'created') written.push(digest);
    });
    return written.sort();
  }

  async getDocument(digest: string): Promise<Uint8Array | null> {
    return (
      this.packed.getInMemory(digest) ??
      (await this.verifiedRead(digest, documentKey(digest))) ??
      this.packed.get(digest)
    );
  }

  async hasDocument(digest: string): Promise<boolean> {
    return this.freshen(documentKey(digest));
  }

  async getSnapshot(digest: string): Promise<SnapshotContent | null> {
    mustHex(digest);
    return readSnapshotContent((d) => this.getDocument(d), digest);
  }

  async readChannel(channel: string): Promise<ChannelHead | null> {
    assertChannel(channel);
    return readChannelHead(this.slots, channel);
  }

  async publish(channel: string, draft: VersionDraft): Promise<VersionRecord> {
    assertChannel(channel);
    const record = await appendVersion(this.slots, channel, draft, {
      current: await this.readChannel(channel),
      headAttempts: this.headAttempts,
      where: this.backend.url,
    });
    this.packed.note(record, { channel, version: record.version });
    return record;
  }

  async listVersions(channel: string): Promise<number[]> {
    assertChannel(channel);
    return numberedKeys(this.backend, versionsPrefix(channel));
  }

  async getVersion(channel: string, version: number): Promise<VersionRecord | null> {
    assertChannel(channel);
    if (!Number.isInteger(version) || version < 1) return null;
    const blob = await this.backend.get(versionKey(channel, version));
    if (blob === null) return null;
    const record = parseVersionRecord(JSON.parse(decoder.decode(blob.bytes)));
    this.packed.note(record, { channel, version });
    return record;
  }

  async appendAudit(records: readonly AuditRecord[]): Promise<void> {
    const first = records[0];
    if (first === undefined) return;
    const bytes = auditBatchBytes(records);
    // A random part keeps names unique across processes; a taken name moves on, never overwrites.
    for (;;) {
      if ((await this.backend.putIfAbsent(auditKey(first, `${++this.auditSeq}-${randomId()}`), bytes)) === 'created')
        return;
    }
  }

  async *readAudit(opts: { readonly since?: string } = {}): AsyncIterable<AuditRecord> {
    const since = opts.since === undefined ? undefined : Date.parse(opts.since);
    if (since !== undefined && Number.isNaN(since))
      throw new RangeError(`readAudit: since is not a time: ${JSON.stringify(opts.since)}`);
    const fromDay = since === undefined ? '' : new Date(since - 86_400_000).toISOString().slice(0, 10);
    const keys: string[] = [];
    for await (const { key } of this.backend.list(AUDIT_PREFIX)) {
      const day = auditDayOfKey(key);
      if (day !== undefined && day >= fromDay) keys.push(key);
    }
    for (const key of keys.sort()) {
      const blob = await this.backend.get(key);
      if (!blob) continue;
      for (const record of parseAuditBatch(decoder.decode(blob.bytes), key)) {
        if (since === undefined || Date.parse(record.at) >= since) yield record;
      }
    }
  }

  async pruneAudit(before: string, opts: { readonly dryRun?: boolean } = {}): Promise<number> {
    const day = auditDay(before);
    const old: string[] = [];
    for await (const { key } of this.backend.list(AUDIT_PREFIX)) {
      const filed = auditDayOfKey(key);
      if (filed !== undefined && filed < day) old.push(key);
    }
    let deleted = 0;
    for (const key of old) {
      const blob = await this.backend.get(key);
      if (!blob || !isRelayBatch(parseAuditBatch(decoder.decode(blob.bytes), key))) continue;
      if (!opts.dryRun) await this.backend.delete(key);
      deleted++;
    }
    return deleted;
  }

  // --- history support (src/history): channel state revisions, create-only like version records

  async getChannelState(channel: string): Promise<{ revision: number; bytes: Uint8Array } | null> {
    assertChannel(channel);
    for (const revision of await numberedKeys(this.backend, statePrefix(channel))) {
      const blob = await this.backend.get(stateKey(channel, revision));
      if (blob) return { revision, bytes: blob.bytes };
    }
    return null;
  }

  async putChannelState(channel: string, revision: number, bytes: Uint8Array): Promise<'created' | 'exists'> {
    assertChannel(channel);
    if (!Number.isInteger(revision) || revision < 1) throw new RangeError(`bad state revision ${revision}`);
    return this.backend.putIfAbsent(stateKey(channel, revision), bytes);
  }

  async listChannels(): Promise<string[]> {
    const names = new Set<string>();
    for await (const { key } of this.backend.list(CHANNELS_PREFIX)) {
      const channel = channelOfVersionKey(key);
      if (channel !== undefined) names.add(channel);
    }
    return [...names].sort();
  }

  // --- retention (src/history/gc.ts)

  listObjects(): AsyncIterable<StoredEntry> {
    return this.listDigests(OBJECTS_PREFIX, '', objectKey);
  }

  listDocuments(): AsyncIterable<StoredEntry> {
    return this.listDigests(DOCUMENTS_PREFIX, DOCUMENT_SUFFIX, documentKey);
  }

  async deleteObject(digest: string, olderThan: number): Promise<boolean> {
    return this.deleteIfOlder(objectKey(digest), olderThan);
  }

  async deleteDocument(digest: string, olderThan: number): Promise<boolean> {
    return this.deleteIfOlder(documentKey(digest), olderThan);
  }

  async deleteVersion(channel: string, version: number): Promise<void> {
    assertChannel(channel);
    assertNotHead(await this.readChannel(channel), channel, version);
    await this.backend.delete(versionKey(channel, version));
  }

  /** Each key is written in one PUT: nothing is staged, nothing is left behind. */
  async deleteStaleTemp(): Promise<number> {
    return 0;
  }

  // --- internals

  /**
   * Whether the key exists; a found key older than freshenAfterMs is touched (S3: copied onto
   * itself), git's "freshen": gc spares what a writer just reused. False when it vanished meanwhile.
   */
  private async freshen(key: string): Promise<boolean> {
    const head = await this.backend.head(key);
    if (!head) return false;
    return this.isFresh(head.modifiedAt) || this.backend.touch(key);
  }

  private isFresh(modifiedAt: number): boolean {
    return modifiedAt > this.now() - this.freshenAfterMs;
  }

  /** Create-only write; an existing key is reused (and freshened), one deleted meanwhile written again. */
  private async putOrReuse(key: string, bytes: Uint8Array): Promise<'created' | 'exists'> {
    for (let attempt = 1; ; attempt++) {
      if ((await this.backend.putIfAbsent(key, bytes)) === 'created') return 'created';
      if (await this.freshen(key)) return 'exists';
      vanished(key, attempt);
    }
  }

  /** The digests stored under `prefix` whose key is exactly where `keyOf` puts them. */
  private async *listDigests(
    prefix: string,
    suffix: string,
    keyOf: (digest: string) => string,
  ): AsyncIterable<StoredEntry> {
    for await (const { key, modifiedAt } of this.backend.list(prefix)) {
      const digest = digestOfName(key.slice(key.lastIndexOf('/') + 1), suffix);
      if (digest !== undefined && keyOf(digest) === key) yield { digest, modifiedAt };
    }
  }

  /**
   * Deletes the key unless it was written or touched at or after `olderThan`. The check and the
   * delete are two requests (object stores have no conditional delete on modification time); the
   * window between them is what the grace period's margin covers.
   */
  private async deleteIfOlder(key: string, olderThan: number): Promise<boolean> {
    const head = await this.backend.head(key);
    if (!head || head.modifiedAt >= olderThan) return false;
    await this.backend.delete(key);
    return true;
  }

  private async verifiedRead(digest: string, key: string): Promise<Uint8Array | null> {
    return (await this.verifiedBlob(digest, key))?.bytes ?? null;
  }

  private async verifiedBlob(digest: string, key: string): Promise<Blob | null> {
    const blob = await this.backend.get(key);
    if (!blob) return null;
    const actual = digestOf(blob.bytes, this.hasher);
    if (actual !== digest) throw new CorruptObjectError(digest, actual, `${this.backend.url}/${key}`);
    return blob;
  }
}

/** A key reported present by a create-only write, then absent, again and again: give up rather than spin. */
function vanished(key: string, attempt: number): void {
  if (attempt >= 5) throw new Error(`${key} exists for create-only writes but not for reads (tried ${attempt} times)`);
}

/** `<prefix><N>.json` keys as numbers, newest first. */
async function numberedKeys(backend: BlobBackend, prefix: string): Promise<number[]> {
  const names: string[] = [];
  for await (const { key } of backend.list(prefix)) names.push(key.slice(prefix.length));
  return numberedNames(names);
}

const randomId = (): string => Math.floor(Math.random() * 2 ** 48).toString(36);

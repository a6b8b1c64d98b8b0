/**
 * The local-disk SnapshotStore (Node edge): layout.ts's keys as paths under the root folder
 * (default `./.meshsnap`); channels run by channel-head.ts over synchronous file calls.
 *
 * Every file is written to tmp/ first and then linked (create-if-absent) or renamed into place,
 * so readers never see a partial file. Immutable files are placed with link(), which fails when
 * the target exists: that is both "never overwrite" and the atomic version allocation.
 *
 * Small files (version records, the head, a delta's tens of objects and documents through
 * putLayered, small packs) are written and read with synchronous calls: each costs one system
 * call of a few microseconds, where a promise call is a thread-pool round trip that costs
 * 0.1–2 ms on a busy machine, and an endpoint change writes ~20 files. Such a batch blocks the
 * event loop for about a millisecond. Big writes (a full snapshot, a checkpoint pack) stay
 * asynchronous and parallel.
 */
import { createHash, hash as oneShotHash, randomUUID } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, renameSync, unlinkSync } from 'node:fs';
import { link, mkdir, open, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import { auditBatchBytes, auditDay, isRelayBatch, parseAuditBatch, type AuditRecord } from '../audit.js';
import { readSnapshotContent, type SnapshotContent } from '../content.js';
import { DIGEST_PREFIX, digestOf, type Hasher } from '../digest.js';
import { joinParts, type PackParts } from './pack-format.js';
import {
  assertChannel,
  parseVersionRecord,
  type ChannelHead,
  type VersionDraft,
  type VersionRecord,
} from '../manifest.js';
import { PackIndex } from './pack-index.js';
import { CorruptObjectError, DigestMismatchError, type SnapshotStore, type StoredEntry } from './store.js';
import { assertDigests, forEachLimited } from './concurrent.js';
import {
  createExclusive,
  createExclusiveSync,
  deleteIfOlder,
  existsSync,
  freshen,
  freshenSync,
  isCode,
  readdirOrEmpty,
  readdirOrEmptySync,
  readTextSync,
  unlinkIfPresent,
  writeAllSync,
} from './fs-files.js';
import { appendVersion, assertNotHead, parseHead, readChannelHead, type ChannelSlots } from './channel-head.js';
import { watchHeadFile } from './head-watch.js';
import {
  AUDIT_PREFIX,
  auditKey,
  CHANNELS_PREFIX,
  digestOfName,
  documentKey,
  DOCUMENTS_PREFIX,
  DOCUMENT_SUFFIX,
  headKey,
  isAuditDay,
  mustHex,
  numberedNames,
  objectKey,
  OBJECTS_PREFIX,
  stateKey,
  statePrefix,
  TMP_DIR,
  versionKey,
  versionsPrefix,
} from './layout.js';

/** SHA-256 with node:crypto: same digests as the default @noble/hashes hasher, much faster. */
export const nodeSha256Hex: Hasher = (bytes) => oneShotHash('sha256', bytes, 'hex');

export const DEFAULT_STORE_DIR = '.meshsnap';

/** Batches (putLayered, putDocuments) of up to this many bytes are written synchronously… */
const SYNC_WRITE_MAX = 1 << 20;
/** …and for putDocuments, of up to this many documents (putLayered's are small by contract). */
const SYNC_BATCH_MAX = 64;
/** writeTempParts copies parts smaller than GATHER_BELOW together, into buffers of WRITE_BATCH bytes. */
const GATHER_BELOW = 1 << 14;
const WRITE_BATCH = 1 << 20;

export interface LocalStoreOptions {
  readonly hasher?: Hasher;
}

/** Temp file names: unique per process (the pid alone may repeat across hosts sharing a store), then a counter. */
const TMP_PREFIX = `${process.pid}-${randomUUID()}-`;
let tmpCounter = 0;

export class LocalStore implements SnapshotStore {
  private readonly hasher: Hasher;
  private readonly made = new Set<string>();
  /** The root with a trailing separator: a key's path is this plus the key. */
  private readonly base: string;
  private readonly tmpDir: string;
  private readonly auditDir: string;
  /** Per channel, the newest version this store read or wrote: known to exist, so a probe can start there. */
  private readonly heads = new Map<string, ChannelHead>();
  /** Per channel, the last record this store published: the next publish reads it (packs' base) without parsing it again. */
  private readonly published = new Map<string, VersionRecord>();
  private auditSeq = 0;
  /** Entries held only in packs (pack-index.ts). */
  private readonly packed: PackIndex;
  /** Every reuse refreshes a file's time (one utimes call). */
  readonly freshenAfterMs = 0;
  /** The channel algorithms' calls (channel-head.ts), all synchronous file calls. */
  private readonly slots: ChannelSlots = {
    readHead: (channel) => {
      const text = readTextSync(this.headPath(channel));
      return text === null ? null : { head: parseHead(text), etag: '' };
    },
    hasVersion: (channel, n) => existsSync(this.versionPath(channel, n)),
    listVersions: (channel) => this.listVersions(channel),
    getVersion: (channel, n) => this.getVersion(channel, n),
    createVersion: (channel, n, bytes) => this.placeNewSync(this.versionPath(channel, n), bytes),
    swapHead: (channel, bytes) => {
      this.replaceHead(channel, bytes);
      return 'ok';
    },
  };

  constructor(
    readonly root: string = DEFAULT_STORE_DIR,
    private readonly opts: LocalStoreOptions = {},
  ) {
    this.hasher = opts.hasher ?? nodeSha256Hex;
    this.base = join(root || '.', sep);
    this.tmpDir = this.path(TMP_DIR);
    this.auditDir = this.path(AUDIT_PREFIX);
    this.packed = new PackIndex(
      {
        readPack: (d) => this.verifiedRead(d, this.objectPath(d)),
        listChannels: () => this.listChannels(),
        listVersions: (c) => this.listVersions(c),
        getVersion: (c, n) => this.getVersion(c, n),
      },
      this.hasher,
    );
  }

  async putObject(digest: string, bytes: Uint8Array): Promise<'created' | 'exists'> {
    const path = this.objectPath(digest);
    const actual = digestOf(bytes, this.hasher);
    if (actual !== digest) throw new DigestMismatchError(digest, actual);
    if (!(await freshen(path)) && (await this.placeNew(path, bytes)) === 'created') return 'created';
    await this.verifiedRead(digest, path);
    return 'exists';
  }

  /**
   * A checkpoint pack: written to a temp file with writev and hashed in the same pass, part by
   * part, never joined in memory (streamed parts are read once, as they are written).
   */
  async putObjectParts(parts: PackParts): Promise<{ digest: string; status: 'created' | 'exists' }> {
    const hash = createHash('sha256');
    const tmp = await this.writeTempParts(parts, (p) => hash.update(p));
    try {
      const digest = `${DIGEST_PREFIX}${hash.digest('hex')}`;
      const path = this.objectPath(digest);
      if (!(await freshen(path))) {
        await this.mkdirOnce(dirname(path));
        if ((await this.linkStaged(tmp, path, () => joinParts(parts))) === 'created')
          return { digest, status: 'created' };
      }
      await this.verifiedRead(digest, path);
      return { digest, status: 'exists' };
    } finally {
      await unlink(tmp).catch(() => undefined);
    }
  }

  uncached(): LocalStore {
    return new LocalStore(this.root, this.opts);
  }

  async getObject(digest: string): Promise<Uint8Array | null> {
    return (
      this.packed.getInMemory(digest) ??
      (await this.verifiedRead(digest, this.objectPath(digest))) ??
      this.packed.get(digest)
    );
  }

  /** A writer asks before reusing an object (loose only): its time is refreshed, so gc's grace period covers the reuse. */
  async hasObject(digest: string): Promise<boolean> {
    return freshen(this.objectPath(digest));
  }

  async putDocuments(documents: ReadonlyMap<string, Uint8Array>): Promise<string[]> {
    const pending = [...documents];
    assertDigests(pending, this.hasher);
    const written: string[] = [];
    if (pending.length <= SYNC_BATCH_MAX && pending.reduce((n, [, b]) => n + b.byteLength, 0) <= SYNC_WRITE_MAX) {
      for (const [digest, bytes] of pending) {
        const path = this.documentPath(digest);
        if (!freshenSync(path) && this.placeNewSync(path, bytes) === 'created') written.push(digest);
      }
      return written.sort();
    }
    await forEachLimited(pending, 16, async ([digest, bytes]) => {
      const path = this.documentPath(digest);
      if (!(await freshen(path)) && (await this.placeNew(path, bytes)) === 'created') written.push(digest);
    });
    return written.sort();
  }

  async getDocument(digest: string): Promise<Uint8Array | null> {
    return (
      this.packed.getInMemory(digest) ??
      (await this.verifiedRead(digest, this.documentPath(digest))) ??
      this.packed.get(digest)
    );
  }

  /**
   * A batch is mostly new files (an update's): one already stored is found by its link failing,
   * and then freshened. Up to SYNC_WRITE_MAX bytes, each file is written, linked into place and
   * its temp file removed, one after the other in order (objects, then each layer). A bigger
   * batch writes every temp file at once, then links them in order, a layer at a time.
   */
  async putLayered(
    objects: ReadonlyMap<string, Uint8Array>,
    layers: readonly ReadonlyMap<string, Uint8Array>[],
  ): Promise<{ objects: string[]; documents: string[] }> {
    type Entry = { readonly digest: string; readonly bytes: Uint8Array; readonly path: string; tmp?: Promise<string> };
    const entries = (m: ReadonlyMap<string, Uint8Array>, path: (d: string) => string): Entry[] =>
      [...m].map(([digest, bytes]) => ({ digest, bytes, path: path(digest) }));
    const groups: Entry[][] = [
      entries(objects, (d) => this.objectPath(d)),
      ...layers.map((l) => entries(l, (d) => this.documentPath(d))),
    ];
    const all = groups.flat();
    let total = 0;
    for (const e of all) {
      const actual = digestOf(e.bytes, this.hasher);
      if (actual !== e.digest) throw new DigestMismatchError(e.digest, actual);
      total += e.bytes.byteLength;
    }
    if (total <= SYNC_WRITE_MAX) {
      const written = groups.map((group) => {
        const created: string[] = [];
        for (const e of group) {
          if (this.placeNewSync(e.path, e.bytes) === 'created') created.push(e.digest);
          else freshenSync(e.path); // found and reused
        }
        return created;
      });
      return { objects: (written[0] ?? []).sort(), documents: written.slice(1).flat().sort() };
    }
    for (const e of all) {
      e.tmp = this.mkdirOnce(dirname(e.path)).then(() => this.writeTemp(e.bytes));
      e.tmp.catch(() => undefined);
    }
    // A temp file is removed once linked (meanwhile the next layer is placed), or at the end.
    const removed: Promise<unknown>[] = [];
    const remove = (e: Entry): void => {
      if (e.tmp) removed.push(e.tmp.then((tmp) => unlink(tmp)).catch(() => undefined));
      e.tmp = undefined;
    };
    try {
      const written: string[][] = [];
      for (const group of groups) {
        const placed = await Promise.all(
          group.map(async (e) => {
            const result = await this.linkStaged(await (e.tmp as Promise<string>), e.path, () => e.bytes);
            remove(e);
            if (result === 'created') return e.digest;
            await freshen(e.path); // found and reused
            return undefined;
          }),
        );
        written.push(placed.filter((d): d is string => d !== undefined));
      }
      return { objects: (written[0] ?? []).sort(), documents: written.slice(1).flat().sort() };
    } finally {
      for (const e of all) remove(e);
      await Promise.all(removed);
    }
  }

  async hasDocument(digest: string): Promise<boolean> {
    return freshenSync(this.documentPath(digest));
  }

  async getSnapshot(digest: string): Promise<SnapshotContent | null> {
    mustHex(digest);
    return readSnapshotContent((d) => this.getDocument(d), digest);
  }

  /**
   * head.json is moved after the version record is written, and concurrent publishers may move it
   * in either order; the version files are the truth. So the head is read as a hint and the
   * versions after it are probed. A head with nothing after it is the answer as it stands (it was
   * written from that version's record): no record is read.
   */
  async readChannel(channel: string): Promise<ChannelHead | null> {
    assertChannel(channel);
    // A version this store saw needs one stat, head.json a read (and it may lag behind anyway).
    let hint = this.heads.get(channel) ?? null;
    if (hint && !existsSync(this.versionPath(channel, hint.version))) {
      this.heads.delete(channel); // removed behind this store's back
      hint = null;
    }
    const head = await readChannelHead(this.slots, channel, hint);
    return head ? this.sawHead(channel, head) : null;
  }

  watchHead(channel: string, onHint: () => void): (() => void) | undefined {
    assertChannel(channel);
    return watchHeadFile(dirname(this.headPath(channel)), onHint);
  }

  private sawHead(channel: string, head: ChannelHead): ChannelHead {
    const known = this.heads.get(channel);
    if (!known || known.version < head.version) this.heads.set(channel, { version: head.version, digest: head.digest });
    return { version: head.version, digest: head.digest };
  }

  async publish(channel: string, draft: VersionDraft): Promise<VersionRecord> {
    assertChannel(channel);
    const record = await appendVersion(this.slots, channel, draft, {
      current: await this.readChannel(channel),
      headAttempts: 1,
      where: this.root,
    });
    this.published.set(channel, record);
    this.packed.note(record, { channel, version: record.version });
    this.sawHead(channel, { version: record.version, digest: record.digest });
    return record;
  }

  async listVersions(channel: string): Promise<number[]> {
    assertChannel(channel);
    return numberedNames(await readdirOrEmpty(this.path(versionsPrefix(channel))));
  }

  async getVersion(channel: string, version: number): Promise<VersionRecord | null> {
    assertChannel(channel);
    if (!Number.isInteger(version) || version < 1) return null;
    const path = this.versionPath(channel, version);
    const mine = this.published.get(channel);
    if (mine?.version === version && existsSync(path)) return mine; // immutable while it exists
    const text = readTextSync(path);
    if (text === null) return null;
    const record = parseVersionRecord(JSON.parse(text));
    this.packed.note(record, { channel, version });
    return record;
  }

  async appendAudit(records: readonly AuditRecord[]): Promise<void> {
    const first = records[0];
    if (first === undefined) return;
    const bytes = auditBatchBytes(records);
    // A taken name (another relay with the same id, or a restart within the same millisecond)
    // moves on to the next number, never overwrites.
    for (;;) {
      if ((await this.placeNew(this.path(auditKey(first, `${++this.auditSeq}`)), bytes)) === 'created') return;
    }
  }

  async *readAudit(opts: { readonly since?: string } = {}): AsyncIterable<AuditRecord> {
    const since = opts.since === undefined ? undefined : Date.parse(opts.since);
    if (since !== undefined && Number.isNaN(since))
      throw new RangeError(`readAudit: since is not a time: ${JSON.stringify(opts.since)}`);
    // A batch is filed under the day of its first record and may run past midnight: keep the day before.
    const fromDay = since === undefined ? '' : new Date(since - 86_400_000).toISOString().slice(0, 10);
    const days = (await readdirOrEmpty(this.auditDir)).filter((d) => isAuditDay(d) && d >= fromDay).sort();
    for (const day of days) {
      const files = (await readdirOrEmpty(join(this.auditDir, day))).filter((f) => f.endsWith('.jsonl')).sort();
      for (const file of files) {
        const path = join(this.auditDir, day, file);
        for (const record of parseAuditBatch(await readFile(path, 'utf8'), path)) {
          if (since === undefined || Date.parse(record.at) >= since) yield record;
        }
      }
    }
  }

  async pruneAudit(before: string, opts: { readonly dryRun?: boolean } = {}): Promise<number> {
    const day = auditDay(before);
    let deleted = 0;
    for (const d of await readdirOrEmpty(this.auditDir)) {
      if (!isAuditDay(d) || d >= day) continue;
      for (const file of await readdirOrEmpty(join(this.auditDir, d))) {
        const path = join(this.auditDir, d, file);
        if (!file.endsWith('.jsonl') || !isRelayBatch(parseAuditBatch(await readFile(path, 'utf8'), path))) continue;
        if (!opts.dryRun) await unlink(path);
        deleted++;
      }
    }
    return deleted;
  }

  // --- history support (channel state, gc)

  /** channels/<name>/state/<revision>.json, create-only like version records. */
  async getChannelState(channel: string): Promise<{ revision: number; bytes: Uint8Array } | null> {
    assertChannel(channel);
    for (const revision of numberedNames(readdirOrEmptySync(this.path(statePrefix(channel))))) {
      try {
        const buffer = readFileSync(this.statePath(channel, revision));
        return { revision, bytes: new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength) };
      } catch (e) {
        if (!isCode(e, 'ENOENT')) throw e; // pruned meanwhile: take the next one
      }
    }
    return null;
  }

  async putChannelState(channel: string, revision: number, bytes: Uint8Array): Promise<'created' | 'exists'> {
    assertChannel(channel);
    if (!Number.isInteger(revision) || revision < 1) throw new RangeError(`bad state revision ${revision}`);
    return this.placeNew(this.statePath(channel, revision), bytes);
  }

  async listChannels(): Promise<string[]> {
    const names = await readdirOrEmpty(this.path(CHANNELS_PREFIX));
    const out: string[] = [];
    for (const name of names.sort()) if ((await this.listVersions(name).catch(() => [])).length > 0) out.push(name);
    return out;
  }

  listObjects(): AsyncIterable<StoredEntry> {
    return this.listTree(this.path(OBJECTS_PREFIX), '');
  }

  listDocuments(): AsyncIterable<StoredEntry> {
    return this.listTree(this.path(DOCUMENTS_PREFIX), DOCUMENT_SUFFIX);
  }

  async deleteObject(digest: string, olderThan: number): Promise<boolean> {
    return deleteIfOlder(this.objectPath(digest), olderThan);
  }

  async deleteDocument(digest: string, olderThan: number): Promise<boolean> {
    return deleteIfOlder(this.documentPath(digest), olderThan);
  }

  async deleteVersion(channel: string, version: number): Promise<void> {
    assertNotHead(await this.readChannel(channel), channel, version);
    await unlink(this.versionPath(channel, version)).catch((e: unknown) => {
      if (!isCode(e, 'ENOENT')) throw e;
    });
  }

  async deleteStaleTemp(olderThan: number): Promise<number> {
    let deleted = 0;
    for (const name of await readdirOrEmpty(this.tmpDir))
      if (await deleteIfOlder(join(this.tmpDir, name), olderThan)) deleted++;
    return deleted;
  }

  private async *listTree(dir: string, suffix: string): AsyncIterable<StoredEntry> {
    for (const prefix of (await readdirOrEmpty(dir)).sort()) {
      for (const name of (await readdirOrEmpty(join(dir, prefix))).sort()) {
        const digest = digestOfName(name, suffix);
        if (digest === undefined) continue;
        try {
          const st = await stat(join(dir, prefix, name));
          yield { digest, modifiedAt: st.mtimeMs };
        } catch (e) {
          if (!isCode(e, 'ENOENT')) throw e;
        }
      }
    }
  }

  private statePath(channel: string, revision: number): string {
    return this.path(stateKey(channel, revision));
  }

  // --- paths

  objectPath(digest: string): string {
    return this.path(objectKey(digest));
  }

  documentPath(digest: string): string {
    return this.path(documentKey(digest));
  }

  /** A key of the layout (layout.ts) as a path under the root. */
  private path(key: string): string {
    return this.base + (sep === '/' ? key : key.replaceAll('/', sep));
  }

  private versionPath(channel: string, version: number): string {
    return this.path(versionKey(channel, version));
  }

  private headPath(channel: string): string {
    return this.path(headKey(channel));
  }

  // --- writing

  /**
   * Replaces head.json (no compare-and-swap on a folder: appendVersion's check that the head is
   * not already newer and readChannel's probing past the head cover the races).
   */
  private replaceHead(channel: string, bytes: Uint8Array): void {
    const tmp = this.writeTempSync(bytes);
    const path = this.headPath(channel);
    // The old head is removed first: ext4 flushes a file renamed over an existing one to disk
    // (auto_da_alloc), which costs milliseconds on a busy disk, and the rename onto a free name
    // does not. Meanwhile there is no head.json, which readers already handle (see readChannel:
    // the version files are the truth), as after a crash between a record and its head.
    unlinkIfPresent(path);
    renameSync(tmp, path);
  }

  /** Puts a complete file at `path` unless something is already there. */
  private async placeNew(path: string, bytes: Uint8Array): Promise<'created' | 'exists'> {
    await this.mkdirOnce(dirname(path));
    const tmp = await this.writeTemp(bytes);
    try {
      return await this.linkStaged(tmp, path, () => bytes);
    } finally {
      await unlink(tmp).catch(() => undefined);
    }
  }

  /** placeNew with synchronous calls (small files, see the top of this file). */
  private placeNewSync(path: string, bytes: Uint8Array): 'created' | 'exists' {
    this.mkdirOnceSync(dirname(path));
    const tmp = this.writeTempSync(bytes);
    try {
      linkSync(tmp, path);
      return 'created';
    } catch (e) {
      if (isCode(e, 'EEXIST')) return 'exists';
      if (isCode(e, 'EPERM') || isCode(e, 'ENOTSUP') || isCode(e, 'ENOSYS')) return createExclusiveSync(path, bytes);
      throw e;
    } finally {
      try {
        unlinkSync(tmp);
      } catch {
        // left for a later cleanup, as placeNew does
      }
    }
  }

  /** Links a complete temp file to `path` unless something is already there (the temp file stays). */
  private async linkStaged(tmp: string, path: string, bytes: () => Uint8Array): Promise<'created' | 'exists'> {
    try {
      await link(tmp, path);
      return 'created';
    } catch (e) {
      if (isCode(e, 'EEXIST')) return 'exists';
      if (isCode(e, 'EPERM') || isCode(e, 'ENOTSUP') || isCode(e, 'ENOSYS')) return createExclusive(path, bytes());
      throw e;
    }
  }

  private async writeTemp(bytes: Uint8Array): Promise<string> {
    await this.mkdirOnce(this.tmpDir);
    const path = `${this.tmpDir}${sep}${TMP_PREFIX}${++tmpCounter}`;
    await writeFile(path, bytes, { flag: 'wx' });
    return path;
  }

  private async writeTempParts(parts: PackParts, onPart: (part: Uint8Array) => void): Promise<string> {
    await this.mkdirOnce(this.tmpDir);
    const path = `${this.tmpDir}${sep}${TMP_PREFIX}${++tmpCounter}`;
    const handle = await open(path, 'wx');
    try {
      // Small parts (most of a pack's entries) are copied together: one hash update and one write
      // per WRITE_BATCH bytes. A bigger part is written at once: every part is copied or written
      // before the next is read (a streamed pack's parts may be views its reader reuses).
      const gathered = new Uint8Array(WRITE_BATCH);
      let used = 0;
      const write = async (bytes: Uint8Array): Promise<void> => {
        onPart(bytes);
        await handle.writev([bytes]); // libuv loops until it is written whole
      };
      const writeGathered = async (): Promise<void> => {
        if (used === 0) return;
        await write(gathered.subarray(0, used));
        used = 0;
      };
      for (const part of parts) {
        if (part.byteLength >= GATHER_BELOW) {
          await writeGathered();
          await write(part);
          continue;
        }
        if (used + part.byteLength > WRITE_BATCH) await writeGathered();
        gathered.set(part, used);
        used += part.byteLength;
      }
      await writeGathered();
    } catch (e) {
      await handle.close();
      await unlink(path).catch(() => undefined);
      throw e;
    }
    await handle.close();
    return path;
  }

  private writeTempSync(bytes: Uint8Array): string {
    this.mkdirOnceSync(this.tmpDir);
    const path = `${this.tmpDir}${sep}${TMP_PREFIX}${++tmpCounter}`;
    writeAllSync(path, bytes);
    return path;
  }

  private mkdirOnceSync(dir: string): void {
    if (this.made.has(dir)) return;
    mkdirSync(dir, { recursive: true });
    this.made.add(dir);
  }

  private async mkdirOnce(dir: string): Promise<void> {
    if (this.made.has(dir)) return;
    await mkdir(dir, { recursive: true });
    this.made.add(dir);
  }

  private async verifiedRead(digest: string, path: string): Promise<Uint8Array | null> {
    let bytes: Uint8Array;
    try {
      const buffer = await readFile(path);
      bytes = new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength); // a plain view, not a Buffer
    } catch (e) {
      if (isCode(e, 'ENOENT')) return null;
      throw e;
    }
    const actual = digestOf(bytes, this.hasher);
    if (actual !== digest) throw new CorruptObjectError(digest, actual, path);
    return bytes;
  }
}

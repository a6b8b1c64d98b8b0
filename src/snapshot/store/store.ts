/**
 * Where snapshots live. Objects (protobuf bytes of one resource) and documents (the canonical
 * JSON nodes of a snapshot tree, see content.ts) are content-addressed and immutable; a channel
 * is a numbered list of version records with a head. The local folder (local.ts) and object storage
 * (object-store.ts over S3 or R2) implement it; test/store/contract.ts checks every backend alike.
 * Consumers take the narrow roles below.
 */
import { MeshsnapError } from '../../errors.js';
import type { AuditRecord } from '../audit.js';
import type { SnapshotContent } from '../content.js';
import type { ChannelHead, VersionDraft, VersionRecord } from '../manifest.js';

/**
 * The store is seen through narrow roles, so each consumer names what it uses (as go-control-plane's
 * server sees its cache only through ConfigWatcher/ConfigFetcher): the relay and the follower read
 * content and channels and append audit batches; compilers write content and publish; history's gc
 * also needs Retention. `SnapshotStore` is every role at once, what the backends implement.
 */

/** Reading content-addressed objects and documents. */
export interface ContentReader {
  /** The bytes, verified against the digest (CorruptObjectError when they do not match), or null. */
  getObject(digest: string): Promise<Uint8Array | null>;
  /** Whether the object is stored; a writer asks before reusing one, so its time is refreshed (see Retention). */
  hasObject(digest: string): Promise<boolean>;
  /** One document's bytes, verified against the digest (CorruptObjectError), or null. */
  getDocument(digest: string): Promise<Uint8Array | null>;
  hasDocument(digest: string): Promise<boolean>;
  /**
   * The expanded snapshot: the top document and every document under it, each verified against
   * its digest. Null when the top document is absent; a missing sub-document throws
   * MissingDocumentError, a corrupt one CorruptObjectError.
   */
  getSnapshot(digest: string): Promise<SnapshotContent | null>;
  /**
   * A reader of the same storage that holds nothing in memory yet: reads answer from what is
   * stored, not from packs this reader has already loaded (the integrity check re-reads storage).
   */
  uncached?(): ContentReader;
}

/**
 * A big object's bytes as parts made while they are iterated (each iteration makes them again),
 * for one too big to hold at once: the pack of a full snapshot whose objects are spooled
 * (src/snapshot/build/object-spool.ts).
 */
export interface StreamedParts extends Iterable<Uint8Array> {
  readonly byteLength: number;
}

/** A big object's parts (a pack's: pack-format.ts), held or streamed. */
export type PackParts = readonly Uint8Array[] | StreamedParts;

/** Storing content-addressed objects and documents (immutable, idempotent). */
export interface ContentWriter {
  /** Stores bytes under their digest. Idempotent; an existing object is never overwritten. Bytes that do not hash to `digest` are refused (DigestMismatchError). */
  putObject(digest: string, bytes: Uint8Array): Promise<'created' | 'exists'>;
  /**
   * Optional, for a big object made of parts (a checkpoint pack): stores the parts' concatenation
   * under its digest, computed here in one pass, without joining them into one buffer; otherwise
   * putObject's contract. Without it, callers join the parts and call putObject.
   */
  putObjectParts?(parts: PackParts): Promise<{ readonly digest: string; readonly status: 'created' | 'exists' }>;
  /**
   * Stores snapshot documents under their digests; all are stored when the promise resolves
   * (callers write children before parents by calling once per layer). Idempotent: a document
   * already stored is not written again. Refuses bytes that do not hash to their digest
   * (DigestMismatchError), before writing any. Returns the digests written (sorted).
   */
  putDocuments(documents: ReadonlyMap<string, Uint8Array>): Promise<string[]>;
  /**
   * Optional, for small batches (a delta's new objects and documents): stores the objects, then
   * the documents layer by layer, with putObject's and putDocuments' contract, in one call. Nothing
   * becomes visible before everything it may name: the objects first, then `layers[0]`, … A store
   * that can stage the bytes and only place them in order (LocalStore) saves a round trip per
   * layer; publish falls back to putObject and one putDocuments per layer. Returns the digests
   * newly written (sorted).
   */
  putLayered?(
    objects: ReadonlyMap<string, Uint8Array>,
    layers: readonly ReadonlyMap<string, Uint8Array>[],
  ): Promise<{ readonly objects: string[]; readonly documents: string[] }>;
}

/** Reading channels: heads, version records, channel state. */
export interface ChannelReader {
  /** The newest version of a channel, or null when nothing was published. */
  readChannel(channel: string): Promise<ChannelHead | null>;
  /** Version numbers, newest first. */
  listVersions(channel: string): Promise<number[]>;
  getVersion(channel: string, version: number): Promise<VersionRecord | null>;
  /** Channel names with at least one version. */
  listChannels(): Promise<string[]>;
  /**
   * The newest revision of a channel's state document (pins and tags, src/history/channel-state.ts),
   * or null when none was written.
   */
  getChannelState(channel: string): Promise<{ readonly revision: number; readonly bytes: Uint8Array } | null>;
  /**
   * Where the store can tell at once that a channel's head may have moved (the folder store: a
   * file-system watch), calls `onHint` then; a hint only says "read the head now", readChannel
   * stays the truth. Returns how to stop, or undefined when it cannot watch (yet): callers poll
   * anyway and may ask again.
   */
  watchHead?(channel: string, onHint: () => void): (() => void) | undefined;
}

/** Appending to channels. */
export interface ChannelWriter {
  /**
   * Appends a version: allocates the next number atomically (two publishers never get the same
   * one), stores the record, then moves the head.
   */
  publish(channel: string, draft: VersionDraft): Promise<VersionRecord>;
  /**
   * Writes revision `revision` (1, 2, …) of a channel's state, create-only: 'exists' when another
   * writer took that number first (the caller re-reads and retries: a compare-and-swap).
   */
  putChannelState(channel: string, revision: number, bytes: Uint8Array): Promise<'created' | 'exists'>;
}

/** The relays' ACK/NACK log. */
export interface AuditWriter {
  /**
   * Appends a batch of audit records (relay ACKs/NACKs) as one new immutable object; never
   * overwrites an earlier batch. An empty batch writes nothing.
   */
  appendAudit(records: readonly AuditRecord[]): Promise<void>;
}

export interface AuditReader {
  /** Audit records, oldest batch first; `since` (ISO time) skips records before it. */
  readAudit(opts?: { readonly since?: string }): AsyncIterable<AuditRecord>;
}

export type AuditLog = AuditWriter & AuditReader;

/** Garbage collection (src/history/gc.ts). */
export interface Retention {
  /** Every stored object / document with its last write or reuse time (ms since the epoch). */
  listObjects(): AsyncIterable<StoredEntry>;
  listDocuments(): AsyncIterable<StoredEntry>;
  /**
   * Deletes an object / document, but only when it was not written or reused since `olderThan`
   * (ms): the check and the delete are as close together as the backend allows. Returns whether
   * it was deleted. Writers refresh the time of an object they find and reuse (putObject,
   * hasObject, putDocuments, hasDocument), which is what gc's grace period relies on.
   */
  deleteObject(digest: string, olderThan: number): Promise<boolean>;
  deleteDocument(digest: string, olderThan: number): Promise<boolean>;
  /** Deletes a version record (gc); never the channel's newest. */
  deleteVersion(channel: string, version: number): Promise<void>;
  /**
   * Deletes the relay audit batches (isRelayBatch) filed under days before the day of `before`
   * (ISO time), or only counts them (`dryRun`); returns how many. A batch is filed under the day of
   * its first record; operator actions are kept.
   */
  pruneAudit?(before: string, opts?: { readonly dryRun?: boolean }): Promise<number>;
  /**
   * Deletes what killed writers left behind (the folder store's temp files) not touched since
   * `olderThan` (ms); returns how many. A store that stages nothing returns 0.
   */
  deleteStaleTemp(olderThan: number): Promise<number>;
  /**
   * How stale (ms) a reused object may be before a reuse refreshes its time (0: every reuse does).
   * gc's grace period must not be shorter.
   */
  readonly freshenAfterMs: number;
}

/** What a relay (and its follower) may do: read snapshots and channels, append audit batches. */
export type RelayStore = ContentReader & ChannelReader & AuditWriter;

/** Every role: what the folder store and the object store implement. */
export type SnapshotStore = ContentReader & ContentWriter & ChannelReader & ChannelWriter & AuditLog & Retention;

export interface StoredEntry {
  readonly digest: string;
  /** Last write or reuse, ms since the epoch. */
  readonly modifiedAt: number;
}

/** Stored bytes do not hash to the digest they are stored under. */
export class CorruptObjectError extends MeshsnapError {
  override readonly name = 'CorruptObjectError';
  constructor(
    readonly digest: string,
    readonly actual: string,
    where = '',
  ) {
    super('internal', `corrupt object ${digest}${where ? ` at ${where}` : ''}: its bytes hash to ${actual}`);
  }
}

/** A put whose bytes do not hash to the digest it names: refused, nothing is written. */
export class DigestMismatchError extends MeshsnapError {
  override readonly name = 'DigestMismatchError';
  constructor(
    readonly digest: string,
    readonly actual: string,
  ) {
    super('internal', `refusing to store bytes hashing to ${actual} under ${digest}`);
  }
}

export class InvalidDigestError extends MeshsnapError {
  override readonly name = 'InvalidDigestError';
  constructor(readonly digest: string) {
    super('bad_request', `not a sha256 digest: ${JSON.stringify(digest)}`);
  }
}

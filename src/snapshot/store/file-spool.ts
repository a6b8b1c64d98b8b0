/**
 * An object spool in a temp file (Node edge): what `meshsnap compile` gives the one-shot build so
 * that a full snapshot's object bytes live on disk, not in the process, until the pack is written
 * (src/snapshot/build/object-spool.ts).
 *
 * The file is removed from its folder as soon as it is opened (POSIX keeps an open file's data
 * until it is closed), so no exit path — an error, a refused or unchanged publish, a kill — leaves
 * it behind, and no reader of the store ever sees it. Where an open file cannot be removed
 * (Windows), it is removed on close, and a killed process leaves it in the store's tmp/ folder,
 * which `meshsnap gc` clears (Retention.deleteStaleTemp).
 */
import { randomUUID } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MeshsnapError } from '../../errors.js';
import type { ObjectSpool } from '../build/object-spool.js';
import { TMP_DIR } from './layout.js';
import { LocalStore } from './local.js';
import type { SnapshotStore } from './store.js';

/**
 * Appends are gathered per group into writes of this size: a group's objects lie in few, big
 * pieces of the file, which `readGroup` reads at once.
 */
const GROUP_CHUNK = 1 << 15;
/** `readGroup` holds at most this many bytes at once; a bigger group is read object by object. */
const MAX_GROUP_READ = 64 * 2 ** 20;
/** A spool refuses to grow past this (a snapshot's objects; the 10k-service mesh's are ~140 MB). */
export const MAX_SPOOL_BYTES = 16 * 2 ** 30;

export class SpoolTooLargeError extends MeshsnapError {
  override readonly name = 'SpoolTooLargeError';
  constructor() {
    super('payload_too_large', `the snapshot's objects exceed ${MAX_SPOOL_BYTES / 2 ** 30} GiB; refused`);
  }
}

/**
 * Where a spool for `store` goes: beside a folder store that exists (its tmp/ folder, on the disk
 * the pack goes to), else the system's temp folder (a dry run makes no store folder).
 */
export const spoolDirOf = (store: SnapshotStore): string =>
  store instanceof LocalStore && existsSync(store.root) ? join(store.root, TMP_DIR) : tmpdir();

/** The appends of one group not yet written, and the pieces of the file its earlier ones went to. */
interface Group {
  readonly id: number;
  readonly buffer: Uint8Array;
  buffered: number;
  /** The piece the buffered bytes will be (undefined: nothing buffered). */
  pending: number | undefined;
  /** Its pieces in append order (a group's bytes are their concatenation). */
  readonly pieces: number[];
  /** Bytes appended to the group. */
  size: number;
}

export class FileSpool implements ObjectSpool {
  private fd: number | undefined;
  /** The file's path while it is still in its folder (only where an open file cannot be removed). */
  private linked: string | undefined;
  private readonly groups = new Map<number, Group>();
  /** Per piece: its file offset (-1 while its bytes wait in its group's buffer), length, group, and start within its group's bytes. */
  private readonly pieceOffset: number[] = [];
  private readonly pieceLength: number[] = [];
  private readonly pieceGroup: number[] = [];
  private readonly pieceStart: number[] = [];
  /** Per handle: its piece, its offset in the piece, its length. */
  private readonly handlePiece: number[] = [];
  private readonly handleAt: number[] = [];
  private readonly lengths: number[] = [];
  /** Where `readGroup` reads a group (grown to the biggest one read). */
  private groupBytes = new Uint8Array(0);
  /** `readGroup` calls: a reader reads from `groupBytes` while it holds the last group read. */
  private groupReads = 0;
  /** Bytes written to the file. */
  private written = 0;
  private appended = 0;

  private constructor(fd: number, linked: string | undefined) {
    this.fd = fd;
    this.linked = linked;
  }

  /** A new, empty spool file in `dir` (made if missing). */
  static open(dir: string): FileSpool {
    mkdirSync(dir, { recursive: true });
    const path = join(dir, `spool-${process.pid}-${randomUUID()}`);
    const fd = openSync(path, 'wx+');
    try {
      unlinkSync(path);
      return new FileSpool(fd, undefined);
    } catch {
      return new FileSpool(fd, path);
    }
  }

  /** Bytes appended so far. */
  get size(): number {
    return this.appended;
  }

  /** `group` (a small non-negative integer): bytes read back together (`readGroup`) are best appended to one group. */
  append(bytes: Uint8Array, group = 0): number {
    const fd = this.openFd();
    const length = bytes.byteLength;
    if (this.size + length > MAX_SPOOL_BYTES) throw new SpoolTooLargeError();
    const g = this.group(group);
    if (g.buffered + length > GROUP_CHUNK || length >= GROUP_CHUNK) this.flush(g);
    const handle = this.lengths.length;
    this.lengths.push(length);
    if (length >= GROUP_CHUNK) {
      const piece = this.newPiece(g, this.written, length);
      writeAll(fd, bytes, this.written);
      this.written += length;
      this.handlePiece.push(piece);
      this.handleAt.push(0);
    } else {
      g.pending ??= this.newPiece(g, -1, 0);
      this.handlePiece.push(g.pending);
      this.handleAt.push(g.buffered);
      g.buffer.set(bytes, g.buffered);
      g.buffered += length;
      this.pieceLength[g.pending] = g.buffered;
    }
    g.size += length;
    this.appended += length;
    return handle;
  }

  read(handle: number): Uint8Array {
    const fd = this.openFd();
    const piece = this.handlePiece[handle];
    const length = this.lengths[handle];
    if (piece === undefined || length === undefined) throw new RangeError(`no spooled object ${handle}`);
    const at = this.handleAt[handle] as number;
    const offset = this.pieceOffset[piece] as number;
    if (offset < 0) {
      const g = this.groups.get(this.pieceGroup[piece] as number) as Group;
      return g.buffer.slice(at, at + length);
    }
    const out = new Uint8Array(length);
    readAll(fd, out, 0, length, offset + at);
    return out;
  }

  /**
   * A reader of the objects appended to `group`, which reads the group's bytes at once (a few big
   * reads instead of one per object): what reads a spool in group order reads each byte once. The
   * bytes it gives are views of one buffer that the next `readGroup` call reuses: use them before
   * it (a pack writer copies or writes each part before it reads the next). Another group's handle,
   * a handle appended since, any handle once another group was read, or a group too big to hold
   * (MAX_GROUP_READ) is read as `read` does.
   */
  readGroup(group: number): (handle: number) => Uint8Array {
    const g = this.groups.get(group);
    if (!g || g.size > MAX_GROUP_READ) return (handle) => this.read(handle);
    const fd = this.openFd();
    // One buffer for every group read (the last one's views die with the next read).
    if (this.groupBytes.byteLength < g.size) this.groupBytes = new Uint8Array(g.size);
    const bytes = this.groupBytes;
    const read = ++this.groupReads;
    const size = g.size;
    for (const piece of g.pieces) {
      const start = this.pieceStart[piece] as number;
      const length = this.pieceLength[piece] as number;
      const offset = this.pieceOffset[piece] as number;
      if (offset < 0) bytes.set(g.buffer.subarray(0, length), start);
      else readAll(fd, bytes, start, length, offset);
    }
    return (handle) => {
      const piece = this.handlePiece[handle];
      if (piece === undefined || this.pieceGroup[piece] !== group) return this.read(handle);
      const start = (this.pieceStart[piece] as number) + (this.handleAt[handle] as number);
      const end = start + (this.lengths[handle] as number);
      // Not in `bytes`: appended after the group was read, or another group was read since.
      return end <= size && read === this.groupReads ? bytes.subarray(start, end) : this.read(handle);
    };
  }

  byteLength(handle: number): number {
    const length = this.lengths[handle];
    if (length === undefined) throw new RangeError(`no spooled object ${handle}`);
    return length;
  }

  /** Closes the file (and removes it, if it is still in its folder); later reads throw. Idempotent. */
  close(): void {
    if (this.fd === undefined) return;
    const fd = this.fd;
    this.fd = undefined;
    this.groups.clear();
    this.groupBytes = new Uint8Array(0);
    closeSync(fd);
    if (this.linked !== undefined) unlinkSync(this.linked);
    this.linked = undefined;
  }

  private group(id: number): Group {
    let g = this.groups.get(id);
    if (!g) {
      if (!Number.isInteger(id) || id < 0) throw new RangeError(`spool group ${id}: not a non-negative integer`);
      g = { id, buffer: new Uint8Array(GROUP_CHUNK), buffered: 0, pending: undefined, pieces: [], size: 0 };
      this.groups.set(id, g);
    }
    return g;
  }

  /** A new piece of `g`, starting where its bytes end. */
  private newPiece(g: Group, offset: number, length: number): number {
    const piece = this.pieceOffset.length;
    this.pieceOffset.push(offset);
    this.pieceLength.push(length);
    this.pieceGroup.push(g.id);
    this.pieceStart.push(g.size);
    g.pieces.push(piece);
    return piece;
  }

  /** Writes `g`'s buffered bytes at the end of the file. */
  private flush(g: Group): void {
    if (g.pending === undefined) return;
    writeAll(this.openFd(), g.buffer.subarray(0, g.buffered), this.written);
    this.pieceOffset[g.pending] = this.written;
    this.written += g.buffered;
    g.buffered = 0;
    g.pending = undefined;
  }

  private openFd(): number {
    if (this.fd === undefined) throw new Error('the object spool is closed');
    return this.fd;
  }
}

/** Reads `length` bytes at file `position` into `out` at `at`. */
function readAll(fd: number, out: Uint8Array, at: number, length: number, position: number): void {
  for (let done = 0; done < length;) {
    const n = readSync(fd, out, at + done, length - done, position + done);
    if (n === 0) throw new Error(`spool file ended at ${position + done}, before ${position + length}`);
    done += n;
  }
}

function writeAll(fd: number, bytes: Uint8Array, position: number): void {
  for (let at = 0; at < bytes.byteLength;) at += writeSync(fd, bytes, at, bytes.byteLength - at, position + at);
}

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

/** Appends are gathered into writes of this size. */
const CHUNK = 1 << 20;
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

export class FileSpool implements ObjectSpool {
  private fd: number | undefined;
  /** The file's path while it is still in its folder (only where an open file cannot be removed). */
  private linked: string | undefined;
  private readonly offsets: number[] = [];
  private readonly lengths: number[] = [];
  /** Appended bytes not yet written, which start at file offset `flushed`. */
  private readonly buffer = new Uint8Array(CHUNK);
  private buffered = 0;
  private flushed = 0;

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
    return this.flushed + this.buffered;
  }

  append(bytes: Uint8Array): number {
    const fd = this.openFd();
    const length = bytes.byteLength;
    if (this.size + length > MAX_SPOOL_BYTES) throw new SpoolTooLargeError();
    const handle = this.offsets.length;
    this.offsets.push(this.size);
    this.lengths.push(length);
    if (this.buffered + length > CHUNK) this.flush();
    if (length >= CHUNK) {
      writeAll(fd, bytes, this.flushed);
      this.flushed += length;
    } else {
      this.buffer.set(bytes, this.buffered);
      this.buffered += length;
    }
    return handle;
  }

  read(handle: number): Uint8Array {
    const fd = this.openFd();
    const offset = this.offsets[handle];
    const length = this.lengths[handle];
    if (offset === undefined || length === undefined) throw new RangeError(`no spooled object ${handle}`);
    if (offset >= this.flushed) return this.buffer.slice(offset - this.flushed, offset - this.flushed + length);
    const out = new Uint8Array(length);
    for (let at = 0; at < length;) {
      const n = readSync(fd, out, at, length - at, offset + at);
      if (n === 0) throw new Error(`spool file ended at ${offset + at}, before ${offset + length}`);
      at += n;
    }
    return out;
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
    closeSync(fd);
    if (this.linked !== undefined) unlinkSync(this.linked);
    this.linked = undefined;
  }

  private flush(): void {
    if (this.buffered === 0) return;
    writeAll(this.openFd(), this.buffer.subarray(0, this.buffered), this.flushed);
    this.flushed += this.buffered;
    this.buffered = 0;
  }

  private openFd(): number {
    if (this.fd === undefined) throw new Error('the object spool is closed');
    return this.fd;
  }
}

function writeAll(fd: number, bytes: Uint8Array, position: number): void {
  for (let at = 0; at < bytes.byteLength;) at += writeSync(fd, bytes, at, bytes.byteLength - at, position + at);
}

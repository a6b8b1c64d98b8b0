/**
 * The folder store's file operations, each written once over FileOps (fs-ops.ts), so the
 * synchronous and the asynchronous path are the same code. Every file is written to a temp file
 * first and then linked (create-if-absent) or renamed into place, so readers never see a partial
 * file; link() fails when the target exists, which is both "never overwrite" and the atomic
 * version allocation. Node edge.
 */
import { randomUUID } from 'node:crypto';
import { dirname, sep } from 'node:path';
import { isCode, type FileOps } from './fs-ops.js';

/** Temp file names: unique per process (the pid alone may repeat across hosts sharing a store), then a counter. */
const TMP_PREFIX = `${process.pid}-${randomUUID()}-`;
let tmpCounter = 0;

/** Places files under a root through one temp folder, creating each folder once. */
export class FilePlacer {
  private readonly made = new Set<string>();

  constructor(readonly tmpDir: string) {}

  /** Puts a complete file at `path` unless something is already there. */
  async placeNew(fs: FileOps, path: string, bytes: Uint8Array): Promise<'created' | 'exists'> {
    await this.mkdirOnce(fs, dirname(path));
    const tmp = await this.writeTemp(fs, bytes);
    try {
      return await linkStaged(fs, tmp, path, bytes);
    } finally {
      try {
        await fs.unlink(tmp);
      } catch {
        // left for gc (Retention.deleteStaleTemp)
      }
    }
  }

  /**
   * Replaces `path` with a complete file. The old file is removed first: ext4 flushes a file
   * renamed over an existing one to disk (auto_da_alloc), which costs milliseconds on a busy disk,
   * and the rename onto a free name does not. Meanwhile there is no file: only for files readers
   * can do without (the channel head).
   */
  async replace(fs: FileOps, path: string, bytes: Uint8Array): Promise<void> {
    const tmp = await this.writeTemp(fs, bytes);
    await removeIfPresent(fs, path);
    await fs.rename(tmp, path);
  }

  async writeTemp(fs: FileOps, bytes: Uint8Array): Promise<string> {
    await this.mkdirOnce(fs, this.tmpDir);
    const path = `${this.tmpDir}${sep}${TMP_PREFIX}${++tmpCounter}`;
    await fs.writeNew(path, bytes);
    return path;
  }

  async mkdirOnce(fs: FileOps, dir: string): Promise<void> {
    if (this.made.has(dir)) return;
    await fs.mkdirp(dir);
    this.made.add(dir);
  }
}

/** Links a complete temp file to `path` unless something is already there (the temp file stays). */
export async function linkStaged(fs: FileOps, tmp: string, path: string, bytes: Uint8Array): Promise<'created' | 'exists'> {
  try {
    await fs.link(tmp, path);
    return 'created';
  } catch (e) {
    if (isCode(e, 'EEXIST')) return 'exists';
    if (isCode(e, 'EPERM') || isCode(e, 'ENOTSUP') || isCode(e, 'ENOSYS')) return createExclusive(fs, path, bytes);
    throw e;
  }
}

/** For filesystems without hard links: exclusive create, then write (not atomic for readers). */
async function createExclusive(fs: FileOps, path: string, bytes: Uint8Array): Promise<'created' | 'exists'> {
  try {
    await fs.writeNew(path, bytes);
  } catch (e) {
    if (isCode(e, 'EEXIST')) return 'exists';
    throw e;
  }
  return 'created';
}

/** Whether the file exists; if so its mtime becomes now (git's "freshen": gc's grace period counts from the last reuse). */
export async function freshen(fs: FileOps, path: string): Promise<boolean> {
  try {
    await fs.touch(path, new Date());
    return true;
  } catch (e) {
    if (isCode(e, 'ENOENT')) return false;
    // A read-only store can still be read: fall back to a plain existence check.
    if (isCode(e, 'EPERM') || isCode(e, 'EACCES') || isCode(e, 'EROFS')) return (await fs.mtimeMs(path)) !== undefined;
    throw e;
  }
}

/** Unlinks the file unless it was written or freshened at or after `olderThan` (ms). */
export async function deleteIfOlder(fs: FileOps, path: string, olderThan: number): Promise<boolean> {
  const mtime = await fs.mtimeMs(path);
  if (mtime === undefined || mtime >= olderThan) return false;
  try {
    await fs.unlink(path);
    return true;
  } catch (e) {
    if (isCode(e, 'ENOENT')) return false;
    throw e;
  }
}

export async function removeIfPresent(fs: FileOps, path: string): Promise<void> {
  try {
    await fs.unlink(path);
  } catch (e) {
    if (!isCode(e, 'ENOENT')) throw e;
  }
}

/** The file's bytes, or null when it is absent. */
export async function readOrNull(fs: FileOps, path: string): Promise<Uint8Array | null> {
  try {
    return await fs.readFile(path);
  } catch (e) {
    if (isCode(e, 'ENOENT')) return null;
    throw e;
  }
}

export async function readdirOrEmpty(fs: FileOps, dir: string): Promise<string[]> {
  try {
    return await fs.readdir(dir);
  } catch (e) {
    if (isCode(e, 'ENOENT')) return [];
    throw e;
  }
}

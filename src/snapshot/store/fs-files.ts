/**
 * The folder store's file primitives: exclusive creation, freshening, listing, reading and
 * deleting single files, each with the synchronous form the store's small-write hot path uses and,
 * where the store needs it, the asynchronous form (large writes and reads off the event loop).
 */
import { closeSync, openSync, readdirSync, readFileSync, statSync, unlinkSync, utimesSync, writeSync } from 'node:fs';
import { open, readdir, stat, unlink, utimes } from 'node:fs/promises';

/** For filesystems without hard links: exclusive create, then write (not atomic for readers). */
export async function createExclusive(path: string, bytes: Uint8Array): Promise<'created' | 'exists'> {
  let handle;
  try {
    handle = await open(path, 'wx');
  } catch (e) {
    if (isCode(e, 'EEXIST')) return 'exists';
    throw e;
  }
  try {
    await handle.writeFile(bytes);
  } finally {
    await handle.close();
  }
  return 'created';
}

export function createExclusiveSync(path: string, bytes: Uint8Array): 'created' | 'exists' {
  try {
    writeAllSync(path, bytes);
  } catch (e) {
    if (isCode(e, 'EEXIST')) return 'exists';
    throw e;
  }
  return 'created';
}

/** Creates `path` (it must not exist) with `bytes`. */
export function writeAllSync(path: string, bytes: Uint8Array): void {
  const fd = openSync(path, 'wx');
  try {
    for (let at = 0; at < bytes.byteLength;) at += writeSync(fd, bytes, at, bytes.byteLength - at);
  } finally {
    closeSync(fd);
  }
}

export function readdirOrEmptySync(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch (e) {
    if (isCode(e, 'ENOENT')) return [];
    throw e;
  }
}

export async function readdirOrEmpty(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (e) {
    if (isCode(e, 'ENOENT')) return [];
    throw e;
  }
}

/** Whether the file exists; if so its mtime becomes now (git's "freshen": gc's grace period counts from the last reuse). */
export async function freshen(path: string): Promise<boolean> {
  const now = new Date();
  try {
    await utimes(path, now, now);
    return true;
  } catch (e) {
    if (isCode(e, 'ENOENT')) return false;
    // A read-only store can still be read: fall back to a plain existence check.
    if (isCode(e, 'EPERM') || isCode(e, 'EACCES') || isCode(e, 'EROFS')) return exists(path);
    throw e;
  }
}

export function freshenSync(path: string): boolean {
  const now = new Date();
  try {
    utimesSync(path, now, now);
    return true;
  } catch (e) {
    if (isCode(e, 'ENOENT')) return false;
    if (isCode(e, 'EPERM') || isCode(e, 'EACCES') || isCode(e, 'EROFS')) return existsSync(path);
    throw e;
  }
}

/** Unlinks the file unless it was written or freshened at or after `olderThan` (ms). */
export async function deleteIfOlder(path: string, olderThan: number): Promise<boolean> {
  try {
    if ((await stat(path)).mtimeMs >= olderThan) return false;
    await unlink(path);
    return true;
  } catch (e) {
    if (isCode(e, 'ENOENT')) return false;
    throw e;
  }
}

export async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (e) {
    if (isCode(e, 'ENOENT')) return false;
    throw e;
  }
}

export function unlinkIfPresent(path: string): void {
  try {
    unlinkSync(path);
  } catch (e) {
    if (!isCode(e, 'ENOENT')) throw e;
  }
}

export const existsSync = (path: string): boolean => statSync(path, { throwIfNoEntry: false }) !== undefined;

export function readTextSync(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    if (isCode(e, 'ENOENT')) return null;
    throw e;
  }
}

export const isCode = (e: unknown, code: string): boolean =>
  typeof e === 'object' && e !== null && (e as { code?: unknown }).code === code;

/**
 * The file calls the folder store makes, twice over: `syncFiles` (one system call each, a few
 * microseconds: for small files, see local.ts) and `asyncFiles` (through libuv's thread pool: for
 * big and parallel writes). The operations built on them (fs-files.ts) are written once against
 * this interface. Node edge.
 */
import { linkSync, mkdirSync, openSync, closeSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, utimesSync, writeSync } from 'node:fs';
import { link, mkdir, readdir, readFile, rename, stat, unlink, utimes, writeFile } from 'node:fs/promises';

type Maybe<T> = T | Promise<T>;

export interface FileOps {
  mkdirp(dir: string): Maybe<unknown>;
  /** Creates `path` with `bytes`; fails with EEXIST when it exists. */
  writeNew(path: string, bytes: Uint8Array): Maybe<void>;
  link(from: string, to: string): Maybe<void>;
  rename(from: string, to: string): Maybe<void>;
  unlink(path: string): Maybe<void>;
  touch(path: string, time: Date): Maybe<void>;
  /** The modification time (ms), or undefined when nothing is there. */
  mtimeMs(path: string): Maybe<number | undefined>;
  readFile(path: string): Maybe<Uint8Array>;
  readdir(dir: string): Maybe<string[]>;
}

export const syncFiles: FileOps = {
  mkdirp: (dir) => mkdirSync(dir, { recursive: true }),
  writeNew: (path, bytes) => {
    const fd = openSync(path, 'wx');
    try {
      for (let at = 0; at < bytes.byteLength; ) at += writeSync(fd, bytes, at, bytes.byteLength - at);
    } finally {
      closeSync(fd);
    }
  },
  link: linkSync,
  rename: renameSync,
  unlink: unlinkSync,
  touch: (path, time) => utimesSync(path, time, time),
  mtimeMs: (path) => statSync(path, { throwIfNoEntry: false })?.mtimeMs,
  readFile: (path) => plainBytes(readFileSync(path)),
  readdir: (dir) => readdirSync(dir),
};

export const asyncFiles: FileOps = {
  mkdirp: (dir) => mkdir(dir, { recursive: true }),
  writeNew: (path, bytes) => writeFile(path, bytes, { flag: 'wx' }),
  link,
  rename,
  unlink,
  touch: (path, time) => utimes(path, time, time),
  mtimeMs: async (path) => {
    try {
      return (await stat(path)).mtimeMs;
    } catch (e) {
      if (isCode(e, 'ENOENT')) return undefined;
      throw e;
    }
  },
  readFile: async (path) => plainBytes(await readFile(path)),
  readdir: (dir) => readdir(dir),
};

/** A plain view, not a Buffer. */
const plainBytes = (buffer: Buffer): Uint8Array => new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);

export const isCode = (e: unknown, code: string): boolean => typeof e === 'object' && e !== null && (e as { code?: unknown }).code === code;

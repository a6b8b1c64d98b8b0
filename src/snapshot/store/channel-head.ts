/**
 * Channels as every store runs them, over the few calls a store supplies (ChannelSlots): the
 * folder store answers them with synchronous file calls, the object store with requests.
 *
 * Where a channel stands (readChannelHead): the stored head is a hint (a racing or crashed
 * publisher may leave it behind); the version records are the truth. From the hint, probe the
 * next version numbers; a hint with nothing after it is the answer without reading a record.
 * Without a hint (none written, or unreadable), the newest listed version is.
 *
 * Appending a version (appendVersion): the next number after the head is claimed with a
 * create-only write of its record (a number another publisher took moves on to the next one, so
 * two publishers never share one), then the head is moved forward by compare-and-swap: a lost
 * race is re-read, and a head already at or past the new version is left alone.
 */
import { MeshsnapError } from '../../errors.js';
import {
  InvalidVersionRecordError,
  parseChannelHead,
  versionRecord,
  type ChannelHead,
  type VersionDraft,
  type VersionRecord,
} from '../manifest.js';
import { jsonBytes } from './layout.js';

type Awaitable<T> = T | Promise<T>;

/** A stored head: `head` is null when its bytes are not a head (torn or foreign); `etag` is for swapHead. */
export interface StoredHead {
  readonly head: ChannelHead | null;
  readonly etag: string;
}

/** What the channel algorithms need from a store (layout.ts says where each thing lives). */
export interface ChannelSlots {
  /** The stored head, or null when none is stored. */
  readHead(channel: string): Awaitable<StoredHead | null>;
  /** Whether version `n`'s record exists. */
  hasVersion(channel: string, n: number): Awaitable<boolean>;
  /** Version numbers, newest first. */
  listVersions(channel: string): Promise<number[]>;
  getVersion(channel: string, n: number): Promise<VersionRecord | null>;
  /** Create-only write of version `n`'s record: 'exists' when another publisher took the number. */
  createVersion(channel: string, n: number, bytes: Uint8Array): Awaitable<'created' | 'exists'>;
  /**
   * Replaces the head when it is still the one read with `etag` (null: when none is stored);
   * 'conflict' when another writer moved it meanwhile. A store that cannot compare-and-swap
   * replaces it anyway: readers correct a lagging head from the version records.
   */
  swapHead(channel: string, bytes: Uint8Array, etag: string | null): Awaitable<'ok' | 'conflict'>;
}

/** The head could not be moved: other writers kept moving it (reported, never overwritten). */
export class HeadConflictError extends MeshsnapError {
  override readonly name = 'HeadConflictError';
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super('conflict', message, options);
  }
}

/** A stored head's text as a head, or null when it is not one. */
export function parseHead(text: string): ChannelHead | null {
  try {
    return parseChannelHead(JSON.parse(text));
  } catch (e) {
    if (e instanceof SyntaxError || e instanceof InvalidVersionRecordError) return null;
    throw e;
  }
}

/** The newest version of a channel; `known` (a version the caller knows exists) replaces the stored head as the hint. */
export async function readChannelHead(
  slots: ChannelSlots,
  channel: string,
  known: ChannelHead | null = null,
): Promise<ChannelHead | null> {
  const hint = known ?? (await slots.readHead(channel))?.head ?? null;
  return resolveHead(hint, {
    hasVersion: (n) => slots.hasVersion(channel, n),
    newestVersion: async () => (await slots.listVersions(channel))[0],
    getVersion: (n) => slots.getVersion(channel, n),
  });
}

interface HeadSources {
  hasVersion(n: number): Awaitable<boolean>;
  newestVersion(): Promise<number | undefined>;
  getVersion(n: number): Promise<VersionRecord | null>;
}

async function resolveHead(hint: ChannelHead | null, io: HeadSources): Promise<ChannelHead | null> {
  let latest: number;
  if (hint === null || hint.version < 1) {
    const newest = await io.newestVersion();
    if (newest === undefined) return null;
    latest = newest;
  } else {
    latest = hint.version;
    while (await io.hasVersion(latest + 1)) latest++;
    if (latest === hint.version) return { version: hint.version, digest: hint.digest };
  }
  const record = await io.getVersion(latest);
  return record ? { version: record.version, digest: record.digest } : null;
}

export interface AppendOptions {
  /** The channel's head as just read (readChannelHead). */
  readonly current: ChannelHead | null;
  /** Head compare-and-swap attempts before HeadConflictError. */
  readonly headAttempts: number;
  /** The store, for messages. */
  readonly where: string;
}

/** Publishes `draft` as the next version after `opts.current`, then moves the head to it. */
export async function appendVersion(
  slots: ChannelSlots,
  channel: string,
  draft: VersionDraft,
  opts: AppendOptions,
): Promise<VersionRecord> {
  let version = (opts.current?.version ?? 0) + 1;
  let record: VersionRecord;
  for (;;) {
    record = versionRecord(channel, version, draft);
    if ((await slots.createVersion(channel, version, jsonBytes(record))) === 'created') break;
    version++; // another publisher took this number
  }
  await moveHead(slots, channel, { version: record.version, digest: record.digest }, opts);
  return record;
}

/** Compare-and-swap, forward only: a lost race is re-read; a head at or past `head` means done. */
async function moveHead(slots: ChannelSlots, channel: string, head: ChannelHead, opts: AppendOptions): Promise<void> {
  const bytes = jsonBytes(head);
  for (let attempt = 0; attempt < opts.headAttempts; attempt++) {
    const stored = await slots.readHead(channel);
    if (stored?.head && stored.head.version >= head.version) return;
    if ((await slots.swapHead(channel, bytes, stored?.etag ?? null)) === 'ok') return;
  }
  // The version record is stored, so readers already find it (readChannelHead probes past the head).
  throw new HeadConflictError(
    `${opts.where}: could not move the head of ${channel} to ${head.version} after ${opts.headAttempts} attempts`,
  );
}

/** gc never deletes the version a channel stands on. */
export function assertNotHead(head: ChannelHead | null, channel: string, version: number): void {
  if (head && head.version === version)
    throw new Error(`refusing to delete version ${version}, the head of ${channel}`);
}

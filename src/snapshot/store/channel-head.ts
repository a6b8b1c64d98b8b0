/**
 * Channels as every store runs them; stores supply the I/O.
 *
 * Where a channel stands (resolveHead): the stored head is a hint (a racing or crashed publisher
 * may leave it behind); the version records are the truth. From the hint, probe the next version
 * numbers; a hint with nothing after it is the answer without reading a record. Without a hint
 * (none written, or unreadable), the newest listed version is.
 *
 * Appending a version (appendVersion): the next number after the head is claimed with a
 * create-only write of its record (a number another publisher took moves on to the next one, so
 * two publishers never share one), then the head is moved forward.
 */
import { InvalidVersionRecordError, parseChannelHead, versionRecord, type ChannelHead, type VersionDraft, type VersionRecord } from '../manifest.js';
import { jsonBytes } from './layout.js';

export interface HeadSources {
  /** Whether version `n`'s record exists. */
  hasVersion(n: number): boolean | Promise<boolean>;
  /** The newest version number listed, if any. */
  newestVersion(): Promise<number | undefined>;
  getVersion(n: number): Promise<VersionRecord | null>;
}

export async function resolveHead(hint: ChannelHead | null, io: HeadSources): Promise<ChannelHead | null> {
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

/** A stored head's text, or null when it is not a head (a torn or foreign file: the version files are the truth). */
export function parseHead(text: string): ChannelHead | null {
  try {
    return parseChannelHead(JSON.parse(text));
  } catch (e) {
    if (e instanceof SyntaxError || e instanceof InvalidVersionRecordError) return null;
    throw e;
  }
}

export interface VersionSlots {
  /** Create-only write of version `n`'s record: 'exists' when another publisher took the number. */
  createVersion(n: number, bytes: Uint8Array): 'created' | 'exists' | Promise<'created' | 'exists'>;
  /** Moves the head forward to `head` (never back: a newer head stays). */
  moveHead(head: ChannelHead): void | Promise<void>;
}

/** Publishes `draft` as the next version after `head` (the channel's, as just read). */
export async function appendVersion(slots: VersionSlots, channel: string, draft: VersionDraft, head: ChannelHead | null): Promise<VersionRecord> {
  let version = (head?.version ?? 0) + 1;
  let record: VersionRecord;
  for (;;) {
    record = versionRecord(channel, version, draft);
    if ((await slots.createVersion(version, jsonBytes(record))) === 'created') break;
    version++; // another publisher took this number
  }
  await slots.moveHead({ version: record.version, digest: record.digest });
  return record;
}

/** gc never deletes the version a channel stands on. */
export function assertNotHead(head: ChannelHead | null, channel: string, version: number): void {
  if (head && head.version === version) throw new Error(`refusing to delete version ${version}, the head of ${channel}`);
}

/**
 * Where a channel stands, as every store decides it: the stored head is a hint (a racing or
 * crashed publisher may leave it behind); the version records are the truth. From the hint, probe
 * the next version numbers; a hint with nothing after it is the answer without reading a record.
 * Without a hint (none written, or unreadable), the newest listed version is. Pure: stores supply
 * the I/O.
 */
import type { ChannelHead, VersionRecord } from '../manifest.js';

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

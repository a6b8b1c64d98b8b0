/**
 * Where everything lives in a store: one key layout for the folder store (a key is a path under
 * its root) and the object store (a key under its prefix). Pure.
 *
 *   objects/sha256/<aa>/<hex>              protobuf bytes of one resource, and packs (packs.ts)
 *   documents/sha256/<aa>/<hex>.json       snapshot tree documents (canonical JSON, see content.ts)
 *   channels/<name>/versions/<N>.json      version records, create-only
 *   channels/<name>/head.json              {version, digest}: a hint (channel-head.ts)
 *   channels/<name>/state/<R>.json         channel state revisions (src/history), create-only
 *   audit/<yyyy-mm-dd>/<time>-<relay>-<seq>….jsonl   relay audit batches (JSON lines), create-only
 *   tmp/                                   the folder store's files being written
 */
import type { AuditRecord } from '../audit.js';
import { digestHex } from '../digest.js';
import { InvalidDigestError } from './store.js';

export const OBJECTS_PREFIX = 'objects/sha256/';
export const DOCUMENTS_PREFIX = 'documents/sha256/';
export const DOCUMENT_SUFFIX = '.json';
export const CHANNELS_PREFIX = 'channels/';
export const AUDIT_PREFIX = 'audit/';
export const TMP_DIR = 'tmp';

export const objectKey = (digest: string): string => {
  const hex = mustHex(digest);
  return `${OBJECTS_PREFIX}${hex.slice(0, 2)}/${hex}`;
};

export const documentKey = (digest: string): string => {
  const hex = mustHex(digest);
  return `${DOCUMENTS_PREFIX}${hex.slice(0, 2)}/${hex}${DOCUMENT_SUFFIX}`;
};

const channelPrefix = (channel: string): string => `${CHANNELS_PREFIX}${channel}/`;
export const versionsPrefix = (channel: string): string => `${channelPrefix(channel)}versions/`;
export const versionKey = (channel: string, version: number): string => `${versionsPrefix(channel)}${version}.json`;
export const headKey = (channel: string): string => `${channelPrefix(channel)}head.json`;
export const statePrefix = (channel: string): string => `${channelPrefix(channel)}state/`;
export const stateKey = (channel: string, revision: number): string => `${statePrefix(channel)}${revision}.json`;

/** The channel a version record's key belongs to, or undefined for any other key. */
export function channelOfVersionKey(key: string): string | undefined {
  return /^channels\/([^/]+)\/versions\/[1-9][0-9]*\.json$/.exec(key)?.[1];
}

/** The numbers of `<N>.json` names (version records, state revisions), newest first; other names are skipped. */
export function numberedNames(names: Iterable<string>): number[] {
  const out: number[] = [];
  for (const name of names) if (/^[1-9][0-9]*\.json$/.test(name)) out.push(Number(name.slice(0, -'.json'.length)));
  return out.sort((a, b) => b - a);
}

/** The digest a `<hex><suffix>` file name stands for, or undefined for any other name. */
export function digestOfName(name: string, suffix: string): string | undefined {
  if (!name.endsWith(suffix)) return undefined;
  const hex = name.slice(0, name.length - suffix.length);
  return /^[0-9a-f]{64}$/.test(hex) ? `sha256:${hex}` : undefined;
}

/** An audit day folder's name. */
export const isAuditDay = (name: string): boolean => /^\d{4}-\d{2}-\d{2}$/.test(name);

/** The day an audit batch's key is filed under, or undefined for a key that is not a batch's. */
export function auditDayOfKey(key: string): string | undefined {
  const m = /^audit\/(\d{4}-\d{2}-\d{2})\/[^/]+\.jsonl$/.exec(key);
  return m?.[1];
}

/**
 * The key of an audit batch, filed under the day of its first record; `unique` (a sequence
 * number, perhaps with a random part) only makes names unique: a taken key moves on to the next.
 */
export function auditKey(first: AuditRecord, unique: string): string {
  const at = new Date(Date.parse(first.at) || Date.now()).toISOString();
  // ':' is not portable in file names; the basic ISO form still sorts by time.
  const stamp = at.replace(/[:]/g, '');
  const relay = first.relay.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 64) || 'relay';
  return `${AUDIT_PREFIX}${at.slice(0, 10)}/${stamp}-${relay}-${unique}.jsonl`;
}

export function mustHex(digest: string): string {
  const hex = digestHex(digest);
  if (hex === undefined) throw new InvalidDigestError(digest);
  return hex;
}

const utf8 = new TextEncoder();

/** Version records and heads as stored: indented JSON and a newline. */
export const jsonBytes = (value: unknown): Uint8Array => utf8.encode(`${JSON.stringify(value, null, 2)}\n`);

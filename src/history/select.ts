/**
 * Version selectors, shared by every command taking a VERSION: `latest` (default), a number,
 * `tag:NAME` or a plain NAME that is not a number, `candidate:N` / `candidate:latest` (a
 * candidate recorded while pinned), `rev:PREFIX` (the version compiled from that GitOps revision,
 * by a prefix of at least 7 hex digits; the newest such version; an ambiguous prefix is an error).
 */
import type { VersionRecord } from '../snapshot/manifest.js';
import type { SnapshotStore } from '../snapshot/store/store.js';
import { readChannelState } from './channel-state.js';
import { candidatesChannel } from './context.js';
import { HistoryError, VersionNotFoundError } from './errors.js';

/** A selector that cannot name anything: a 400 in the API, a usage error in the CLI. */
export class InvalidSelectorError extends HistoryError {
  override readonly name = 'InvalidSelectorError';
  constructor(message: string) {
    super(message, 'bad_request');
  }
}

/**
 * The grammar: `latest`, a version number (no leading zero), `candidate:N` or `candidate:latest`,
 * `rev:PREFIX` (7–64 hex digits of a GitOps revision), `tag:NAME` or a plain NAME, where NAME is
 * 1–128 of letters, digits, `.`, `_`, `/`, `-`, starts with a letter or digit and is not all digits
 * (a tag is never a number: `tag:123` is malformed).
 */
const SELECTOR_RE =
  /^(latest|[1-9][0-9]*|candidate:(latest|[1-9][0-9]*)|rev:[0-9a-fA-F]{7,64}|(tag:)?(?![0-9]+$)[A-Za-z0-9][A-Za-z0-9._/-]{0,127})$/;
export const SELECTOR_GRAMMAR = 'use a number, latest, tag:NAME, NAME, candidate:N or rev:COMMIT';

export const isVersionSelector = (spec: string): boolean => SELECTOR_RE.test(spec);

export async function selectVersion(
  store: SnapshotStore,
  channel: string,
  spec: string | undefined = 'latest',
): Promise<VersionRecord> {
  if (!SELECTOR_RE.test(spec))
    throw new InvalidSelectorError(`not a version: ${JSON.stringify(spec)} (${SELECTOR_GRAMMAR})`);
  if (spec.startsWith('rev:')) return byRevision(store, channel, spec.slice('rev:'.length).toLowerCase());
  if (spec.startsWith('candidate:'))
    return byNumber(store, candidatesChannel(channel), spec.slice('candidate:'.length), 'candidate');
  if (spec === 'latest' || /^[0-9]+$/.test(spec)) return byNumber(store, channel, spec, 'version');
  const name = spec.startsWith('tag:') ? spec.slice(4) : spec;
  const { state } = await readChannelState(store, channel);
  const version = state.tags.get(name);
  if (version === undefined) throw new VersionNotFoundError(`channel ${channel} has no tag ${JSON.stringify(name)}`);
  return byNumber(store, channel, String(version), `tag ${name} →`);
}

/** A `rev:` prefix that matches two revisions (API 400). */
export class AmbiguousRevisionError extends InvalidSelectorError {}

/** The newest version compiled from the revision `prefix` names; two revisions matching is an error. */
async function byRevision(store: SnapshotStore, channel: string, prefix: string): Promise<VersionRecord> {
  let found: VersionRecord | undefined;
  for (const n of await store.listVersions(channel)) {
    const r = await store.getVersion(channel, n);
    const rev = r?.source?.revision.toLowerCase();
    if (!r || rev === undefined || !rev.startsWith(prefix)) continue;
    if (!found) found = r;
    else if (found.source?.revision.toLowerCase() !== rev)
      throw new AmbiguousRevisionError(
        `rev:${prefix} is ambiguous on channel ${channel}: ${found.source?.revision} and ${rev}; give more digits`,
      );
  }
  if (!found) throw new VersionNotFoundError(`channel ${channel} has no version compiled from revision ${prefix}`);
  return found;
}

/** How a record is named in output: `7` or `candidate:3`. */
export const versionLabel = (record: VersionRecord): string =>
  record.status === 'candidate' ? `candidate:${record.version}` : String(record.version);

async function byNumber(store: SnapshotStore, channel: string, spec: string, what: string): Promise<VersionRecord> {
  let n: number;
  if (spec === 'latest') {
    const head = await store.readChannel(channel);
    if (!head) throw new VersionNotFoundError(`channel ${channel} has no versions yet`);
    n = head.version;
  } else {
    if (!/^[1-9][0-9]*$/.test(spec)) throw new VersionNotFoundError(`not a version: ${JSON.stringify(spec)}`);
    n = Number(spec);
  }
  const record = await store.getVersion(channel, n);
  if (!record) throw new VersionNotFoundError(`channel ${channel} has no ${what} ${n}`);
  return record;
}

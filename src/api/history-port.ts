/**
 * What the API needs from the history library (src/history): version selection, channel state
 * (pin, tags, candidates), diff, the audit trail, and the audit-logged writes. The app takes it by
 * injection (default: history-binding.ts) so route handlers stay small and tests can swap it.
 */
import type { VersionDiff } from '../history/diff/index.js';
import type { GcOptions, GcResult } from '../history/gc.js';
import type { Diagnostic } from '../model/diagnostics.js';
import type { BuiltInputs, StoredObject } from '../snapshot/stored-inputs/index.js';
import type { BuiltSnapshot } from '../snapshot/build.js';
import type { VersionRecord, VersionSource } from '../snapshot/manifest.js';
import type { PackCache } from '../snapshot/store/packs.js';
import type { SnapshotStore } from '../snapshot/store/store.js';
import type { XdsType } from '../xds/type-urls.js';

/** Who did a write, when and why: the library records it in the version record / audit log. */
export interface Operator {
  readonly actor: string;
  readonly at: Date;
  readonly reason?: string;
}

export interface ChannelStatus {
  /** The served version (the head), or null before the first publish. */
  readonly current: number | null;
  readonly pinned: {
    readonly version: number;
    readonly actor?: string;
    readonly at?: string;
    readonly reason?: string;
  } | null;
  /** tag name → version. */
  readonly tags: Readonly<Record<string, number>>;
  /** Candidate numbers (selector `candidate:N`), newest first: config changes recorded while pinned. */
  readonly candidates: readonly number[];
}

/** One audit trail entry: a publish, an operator action, or a relay ACK/NACK. */
export interface AuditEntry {
  readonly at: string;
  readonly kind: string;
  readonly channel: string;
}

export interface CompiledSnapshot {
  readonly snapshot: BuiltSnapshot;
  readonly diagnostics: readonly Diagnostic[];
  /** The canonical input objects and their manifest (stored by the publish, before the record). */
  readonly objects: readonly StoredObject[];
  readonly stored: BuiltInputs;
}

export type PublishOutcome =
  | { readonly status: 'published'; readonly version: number; readonly record: VersionRecord }
  /** The channel is pinned: the config was recorded as candidate `candidate`; `version` is what is served. */
  | { readonly status: 'candidate'; readonly version: number; readonly candidate: number | null }
  | { readonly status: 'unchanged'; readonly version: number };

export interface PublishOptions {
  readonly allowShrink?: boolean;
  /** The GitOps revision the inputs came from (`sourceRevision`, `sourceUrl` in a compile body). */
  readonly source?: VersionSource;
  /** The API's pack cache (ApiDeps.packCache): a publish merges its delta into the last pack without reading it back. */
  readonly packCache?: PackCache;
}

/** Override a safety refusal (body field `force: true`). */
export interface Force {
  readonly force?: boolean;
}

export interface HistoryOps {
  /** A selector (`latest`, a number, `tag:NAME`, a tag name, `candidate:N`) → its record; throws VersionNotFoundError. */
  select(store: SnapshotStore, channel: string, selector: string): Promise<VersionRecord>;
  status(store: SnapshotStore, channel: string): Promise<ChannelStatus>;
  /** Channels with versions (candidate channels left out). */
  channels(store: SnapshotStore): Promise<string[]>;
  diff(
    store: SnapshotStore,
    from: VersionRecord,
    to: VersionRecord,
    opts: { readonly node?: { id: string; metadata: Record<string, unknown> }; readonly types?: readonly XdsType[] },
  ): Promise<VersionDiff>;
  /** Behind the publish guard (src/history/guard.ts): a refusal throws PublishRefusedError (409 `publish_guard`) unless `allowShrink`. */
  publish(
    store: SnapshotStore,
    channel: string,
    compiled: CompiledSnapshot,
    op: Operator,
    opts?: PublishOptions,
  ): Promise<PublishOutcome>;
  /** `force`: even when clusters that had endpoints in the target would have none. */
  rollback(
    store: SnapshotStore,
    channel: string,
    selector: string,
    op: Operator,
    opts?: Force,
  ): Promise<Record<string, unknown>>;
  /** Pins `selector` (default: the served version), which must have the served config; `force` moves an existing pin. */
  pin(
    store: SnapshotStore,
    channel: string,
    op: Operator,
    opts?: Force & { readonly selector?: string },
  ): Promise<Record<string, unknown>>;
  unpin(store: SnapshotStore, channel: string, op: Operator): Promise<Record<string, unknown>>;
  promote(
    store: SnapshotStore,
    channel: string,
    selector: string,
    op: Operator,
    opts?: Force,
  ): Promise<Record<string, unknown>>;
  /** `force` moves a tag that names another version. */
  tag(
    store: SnapshotStore,
    channel: string,
    selector: string,
    name: string,
    op: Operator,
    opts?: Force,
  ): Promise<Record<string, unknown>>;
  /** Retention over the whole store (src/history/gc.ts); its audit record is filed under `channel`. */
  gc(store: SnapshotStore, channel: string, opts: GcOptions, op: Operator): Promise<GcResult>;
  /** The audit trail of one channel, oldest first. */
  audit(
    store: SnapshotStore,
    filter: { readonly channel: string; readonly since?: string; readonly proxy?: string },
  ): Promise<readonly AuditEntry[]>;
}

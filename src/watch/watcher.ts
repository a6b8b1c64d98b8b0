/**
 * `meshsnap watch`: informers → object cache → debounce → compile → publish.
 *
 * - Nothing is published before every informer has synced (listed once): a half-listed cluster
 *   would publish a snapshot missing services, and proxies would drop their clusters.
 * - Events are debounced as istiod does (debounce.ts); each round compiles what the cache holds,
 *   with last-known-good substitutions (last-known-good.ts), and publishes unless the snapshot is
 *   the one the channel already serves.
 * - Each published version carries its stored inputs (src/snapshot/stored-inputs/) and its
 *   provenance: the objects changed since its parent and the substitutions in force. The stored
 *   inputs tree is kept here and updated per changed object; its root is the snapshot's inputs
 *   digest, whichever compiler compiled it.
 * - An endpoint change is incremental end to end: object → InputSet patch → incremental compile
 *   → snapshot delta → inputs tree update → publish of only the new objects and documents.
 * - A round's steps (inputs, compile request, compile, publish, result) live in ./round/.
 * - `writeStatus` (`--write-status`): after a served round, the Gateway API statuses the compile
 *   computed are written to the objects' status subresources when they changed (./status/).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { sortDiagnostics, type Diagnostic } from '../model/diagnostics.js';
import {
  keyString,
  KUBERNETES_GATEWAY_KIND,
  StoredInputsTree,
  type BuiltInputs,
} from '../snapshot/stored-inputs/index.js';
import type { Hasher } from '../snapshot/digest.js';
import { newPackCache } from '../snapshot/store/pack-cache.js';
import type { SnapshotStore } from '../snapshot/store/store.js';
import type { LogFields, LogLevel } from '../log.js';
import { systemClock, type Clock } from './clock.js';
import type { CompileRequest, CompileResult, SnapshotCompiler } from './compiler.js';
import { IncrementalLocalCompiler } from './incremental-compiler.js';
import { Debouncer } from './debounce.js';
import { makeDiscovery, type Discover } from './discovery.js';
import { ResourceInformer, type BackoffOptions } from './informers.js';
import { LastKnownGood } from './last-known-good.js';
import { WatchMetrics } from './metrics.js';
import { ObjectCache, type CacheChange, type Raw } from './object-cache.js';
import { ChangeLog } from './provenance.js';
import {
  ALL_RESOURCES,
  ENDPOINT_SLICES,
  ENDPOINTS,
  GATEWAY_API_STATUS_RESOURCES,
  type ResourceSpec,
} from './resources.js';
import { compileTimed } from './round/compile.js';
import { updateStoredInputs } from './round/inputs.js';
import { publishRound, type PublishedRound } from './round/publish.js';
import { RoundSpool } from './round/spool.js';
import { PublishGuard, refusalMessage } from '../history/guarded-publish.js';
import { pinnedRefusalMessage } from '../history/pinned-round.js';
import { compileRequest } from './round/request.js';
import { roundResult, type RoundResult } from './round/result.js';
import { computedStatuses, type ComputedStatus } from './status/desired.js';
import { kubeStatusClient, statusObjectPath } from './status/status-client.js';
import { StatusWriter, type StatusClient } from './status/writer.js';

export type { RoundResult } from './round/result.js';

/** One log entry in the shape of src/log.ts: a stable dotted `event`, optional human `message`, fields. */
export type WatchLogEntry = LogFields & { readonly level: LogLevel; readonly event: string; readonly message?: string };
export type WatchLog = (entry: WatchLogEntry) => void;

export interface WatcherOptions {
  readonly kubeConfig: KubeConfig;
  readonly store: SnapshotStore;
  readonly channel: string;
  /** Watch only these namespaces (cluster-scoped kinds and the mesh config are read anyway). */
  readonly namespaces?: readonly string[];
  /** Default: in process, incremental for endpoint-only rounds (IncrementalLocalCompiler). */
  readonly compiler?: SnapshotCompiler;
  readonly quietMs?: number;
  readonly maxDelayMs?: number;
  /** Drives the debounce (tests inject a ManualClock). */
  readonly clock?: Clock;
  /** Drives informer restarts and CRD polling (default: real time). */
  readonly timerClock?: Clock;
  readonly backoff?: BackoffOptions;
  /** How often discovery is asked again for CRDs that were missing (default 30 s). */
  readonly crdPollMs?: number;
  readonly hasher?: Hasher;
  readonly discover?: Discover;
  readonly log?: WatchLog;
  /** Wall clock for version records' createdAt (and the status writer's lastTransitionTime). */
  readonly now?: () => Date;
  /** `--write-status`: write the Gateway API statuses each served round computed (src/watch/status/). */
  readonly writeStatus?: WriteStatusOptions;
  /**
   * A full garbage collection (src/full-gc.ts), run where a round that compiles and publishes
   * everything (the first, one after a publish that may have failed, a mesh config change) has just
   * let much die: V8 sets its next heap limit from what a full collection leaves, so the process's
   * peak stays near its live data. Never in the other rounds: an endpoint change, or a config
   * change compiled as a difference, waits for no collection.
   */
  readonly collect?: () => void;
}

export interface WriteStatusOptions {
  /** Status requests per second and burst (defaults 20 and 40). */
  readonly qps?: number;
  readonly burst?: number;
  /** Default: the kubeconfig's API server. */
  readonly client?: StatusClient;
  readonly maxAttempts?: number;
  readonly retryInitialMs?: number;
}

export class Watcher {
  readonly metrics = new WatchMetrics();
  private readonly cache: ObjectCache;
  private readonly changes = new ChangeLog();
  private readonly lkg = new LastKnownGood();
  /** The packs of the last publishes: the next one merges its delta into the newest without reading it back. */
  private readonly packCache = newPackCache();
  private readonly compiler: SnapshotCompiler;
  private readonly debouncer: Debouncer;
  private readonly clock: Clock;
  private readonly timerClock: Clock;
  private readonly log: WatchLog;
  private readonly informers: ResourceInformer[] = [];
  private missing: ResourceSpec[] = [];
  private changedSinceCompile = new Set<string>();
  /** The stored inputs of what the next round compiles, updated per changed object. */
  private readonly inputsTree: StoredInputsTree;
  /** The last publish may have failed: write every inputs document, and compile a complete snapshot. */
  private storeIncomplete = false;
  /** The inputs this watcher last saw recorded: what the tree's next commit builds on, in the store (history/packed-inputs.ts). */
  private inputsBase: string | undefined;
  /** Commits of the inputs tree: the first holds every entry. */
  private inputsCommits = 0;
  private readonly guard = new PublishGuard();
  /** Informers whose relist came back empty: informer id → objects kept from before. */
  private readonly kept = new Map<string, number>();
  /** Informers failing with 403/404 (a lost RBAC rule, a deleted CRD): their objects stay cached. */
  private readonly denied = new Map<string, DeniedInformer>();
  private crdTimer: unknown = null;
  /** `--write-status` only. */
  private readonly status: StatusWriter | undefined;
  private started = false;
  private stopped = false;
  private everSynced = false;
  /** Events applied (changed or not); tests wait on it. */
  eventsSeen = 0;
  readonly rounds: RoundResult[] = [];

  constructor(private readonly opts: WatcherOptions) {
    this.cache = new ObjectCache(opts.hasher);
    this.inputsTree = new StoredInputsTree(opts.hasher);
    this.compiler = opts.compiler ?? new IncrementalLocalCompiler(opts.hasher, opts.collect);
    this.clock = opts.clock ?? systemClock;
    this.timerClock = opts.timerClock ?? systemClock;
    this.log = opts.log ?? (() => undefined);
    this.debouncer = new Debouncer({
      quietMs: opts.quietMs ?? 100,
      maxMs: opts.maxDelayMs ?? 10_000,
      clock: this.clock,
      fire: (waited) => this.round(waited),
      onError: (err) =>
        this.log({ level: 'error', event: 'watch.round_failed', message: 'compile round failed', error: String(err) }),
    });
    this.status = opts.writeStatus && this.statusWriter(opts.writeStatus);
  }

  private statusWriter(o: WriteStatusOptions): StatusWriter {
    return new StatusWriter({
      client: o.client ?? kubeStatusClient(this.opts.kubeConfig),
      pathOf: statusObjectPath,
      clock: this.timerClock,
      ...(this.opts.now ? { now: this.opts.now } : {}),
      ...(o.qps !== undefined ? { qps: o.qps } : {}),
      ...(o.burst !== undefined ? { burst: o.burst } : {}),
      ...(o.maxAttempts !== undefined ? { maxAttempts: o.maxAttempts } : {}),
      ...(o.retryInitialMs !== undefined ? { retryInitialMs: o.retryInitialMs } : {}),
      log: (level, event, fields) => this.log({ level, event, ...fields }),
      count: (result) => this.metrics.statusWrites.inc({ result }),
      queued: (size) => this.metrics.statusQueue.set(size),
    });
  }

  /** Discovers what the cluster serves and starts one informer per resource (and namespace). */
  async start(): Promise<void> {
    if (this.started) throw new Error('watcher already started');
    this.started = true;
    const discover = this.opts.discover ?? makeDiscovery(this.opts.kubeConfig);
    // Every kind is asked about at once (kinds of one group-version share the request, see
    // discovery.ts); informers start in ALL_RESOURCES order, core kinds at once.
    const choices = ALL_RESOURCES.map((spec) => this.choose(spec, discover));
    for (const c of choices) c.catch(() => undefined); // a failure is thrown by the await below
    for (const choice of choices) {
      const chosen = await choice;
      if (this.stopped) return; // stopped while discovery was waiting on the API server
      if (chosen && 'missing' in chosen) this.missing.push(chosen.missing);
      else if (chosen) this.startInformers(chosen.spec, chosen.version);
    }
    if (this.missing.length > 0) this.pollCrds(discover);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.debouncer.close();
    if (this.crdTimer !== null) this.timerClock.clearTimeout(this.crdTimer);
    await Promise.all(this.informers.map((i) => i.stop()));
    await this.debouncer.idle();
    await this.status?.stop();
  }

  /** Resolves when no compile round is running and (--write-status) no status is waiting to be written. */
  async idle(): Promise<void> {
    await this.debouncer.idle();
    await this.status?.idle();
  }

  get synced(): boolean {
    return this.started && this.informers.length > 0 && this.informers.every((i) => i.synced);
  }

  /**
   * Ready once every informer synced. An informer whose relist came back empty keeps its last
   * objects and is listed under `warnings` (still ready: what is served is the last good state);
   * so is one that keeps failing with 403 or 404 (its cache is kept while it restarts).
   */
  readiness(): { ready: boolean; waitingFor?: string[]; missingCrds?: string[]; warnings?: string[] } {
    const waiting = this.informers.filter((i) => !i.synced).map((i) => i.id);
    const ready = this.synced;
    return {
      ready,
      ...(waiting.length > 0 || !ready ? { waitingFor: waiting } : {}),
      ...(this.missing.length > 0 ? { missingCrds: this.missing.map((s) => `${s.kind}.${s.group}`) } : {}),
      ...(this.kept.size > 0 || this.denied.size > 0 ? { warnings: this.warnings() } : {}),
    };
  }

  private warnings(): string[] {
    const emptied = [...this.kept].map(([id, n]) => `informer ${id} relisted nothing; keeping its last ${n} object(s)`);
    const denied = [...this.denied].map(
      ([id, d]) =>
        `informer ${id} fails with HTTP ${d.status} since ${d.since} (${d.error}); keeping its last objects and retrying`,
    );
    return [...emptied, ...denied];
  }

  /** Informers running now (for tests and /readyz). */
  informerIds(): string[] {
    return this.informers.map((i) => i.id);
  }

  // ---- discovery ------------------------------------------------------------------------------

  private async choose(
    spec: ResourceSpec,
    discover: Discover,
  ): Promise<{ spec: ResourceSpec; version: string } | { missing: ResourceSpec }> {
    // Core v1 is always there; asking would only cost a request per kind.
    if (spec.group === '') return { spec, version: spec.versions[0] as string };
    const version = await discover(spec);
    if (version !== undefined) return { spec, version };
    if (spec === ENDPOINT_SLICES) {
      this.log({
        level: 'warn',
        event: 'watch.endpoints_fallback',
        message: 'discovery.k8s.io/v1 EndpointSlices are not served; reading core v1 Endpoints instead',
      });
      return { spec: ENDPOINTS, version: 'v1' };
    }
    if (spec.optional) {
      this.log({
        level: 'warn',
        event: 'watch.crd_missing',
        message: `${spec.kind}.${spec.group} is not installed (no CRD); skipped, and watched for`,
        versions: spec.versions,
      });
      return { missing: spec };
    }
    throw new Error(`the API server does not serve ${spec.kind}.${spec.group} in ${spec.versions.join(', ')}`);
  }

  private pollCrds(discover: Discover): void {
    this.crdTimer = this.timerClock.setTimeout(() => {
      this.crdTimer = null;
      void this.checkMissing(discover).finally(() => {
        if (!this.stopped && this.missing.length > 0) this.pollCrds(discover);
      });
    }, this.opts.crdPollMs ?? 30_000);
  }

  private async checkMissing(discover: Discover): Promise<void> {
    for (const spec of [...this.missing]) {
      let version: string | undefined;
      try {
        version = await discover(spec);
      } catch (err) {
        this.log({
          level: 'warn',
          event: 'watch.discovery_failed',
          message: 'discovery failed; will ask again',
          error: String(err),
        });
        return;
      }
      if (version === undefined || this.stopped) continue;
      this.missing = this.missing.filter((s) => s !== spec);
      this.log({
        level: 'info',
        event: 'watch.crd_found',
        message: `${spec.kind}.${spec.group}/${version} is now served; starting its informer`,
      });
      this.startInformers(spec, version);
    }
  }

  // ---- informers ------------------------------------------------------------------------------

  private startInformers(spec: ResourceSpec, version: string): void {
    const namespaces =
      spec.namespaced && spec.namespace === undefined && this.opts.namespaces?.length
        ? this.opts.namespaces
        : [undefined];
    // The status writer reads each object's current status and resourceVersion, which the cache strips.
    const status = GATEWAY_API_STATUS_RESOURCES.includes(spec) ? this.status : undefined;
    for (const ns of namespaces) {
      const informer: ResourceInformer = new ResourceInformer(
        this.opts.kubeConfig,
        spec,
        version,
        ns,
        {
          upsert: (raw) => {
            status?.observe(raw);
            this.apply(this.cache.upsert(raw), spec.kind);
          },
          remove: (raw) => {
            status?.forget(raw);
            this.apply(this.cache.remove(raw), spec.kind, 'deleted');
          },
          synced: () => this.onSynced(informer),
          emptied: (kept) => {
            this.kept.set(informer.id, kept);
            this.metrics.keptObjects.set({ informer: informer.id }, kept);
            this.log({
              level: 'warn',
              event: 'watch.informer_emptied',
              message: `informer ${informer.id} relisted nothing where it listed ${kept} object(s): keeping them (a lost RBAC rule or a deleted CRD?)`,
              informer: informer.id,
              kept,
            });
          },
          refilled: () => {
            this.kept.delete(informer.id);
            this.metrics.keptObjects.set({ informer: informer.id }, 0);
            this.log({
              level: 'info',
              event: 'watch.informer_refilled',
              message: `informer ${informer.id} lists objects again; the kept ones are replaced`,
              informer: informer.id,
            });
          },
          error: (err, inMs) => {
            this.metrics.informerErrors.inc({ informer: informer.id });
            this.log({
              level: 'warn',
              event: 'watch.informer_restart',
              message: `informer ${informer.id} failed; restarting in ${inMs} ms`,
              error: errorText(err),
            });
            this.onDenied(informer.id, err);
          },
          recovered: () => {
            if (!this.denied.delete(informer.id)) return;
            this.metrics.informerDenied.set({ informer: informer.id }, 0);
            this.log({
              level: 'info',
              event: 'watch.informer_allowed',
              message: `informer ${informer.id} lists and watches again`,
              informer: informer.id,
            });
          },
        },
        this.timerClock,
        this.opts.backoff,
      );
      this.informers.push(informer);
      informer.start();
    }
  }

  /** A 403 or 404 is not a blip: show it until the informer lists again (first time: since when). */
  private onDenied(id: string, err: unknown): void {
    const status = deniedStatus(err);
    if (status === undefined) return;
    const before = this.denied.get(id);
    const denied: DeniedInformer = {
      status,
      error: errorText(err).slice(0, 300),
      since: before?.status === status ? before.since : new Date().toISOString(),
    };
    this.denied.set(id, denied);
    this.metrics.informerDenied.set({ informer: id }, status);
    if (before?.status !== status) {
      this.log({
        level: 'warn',
        event: 'watch.informer_denied',
        message: `informer ${id} fails with HTTP ${status} (a lost RBAC rule or a deleted CRD?): keeping its last objects and retrying`,
        informer: id,
        status,
        error: denied.error,
      });
    }
  }

  private apply(change: CacheChange | undefined, kind: string, type = 'upsert'): void {
    this.eventsSeen++;
    this.metrics.events.inc({ kind, type: change?.change ?? (type === 'deleted' ? 'deleted' : 'unchanged') });
    if (!change) return;
    this.changes.record(change.key, change.change, change.resourceVersion, change.manager);
    this.changedSinceCompile.add(keyString(change.key));
    this.debouncer.trigger();
  }

  private onSynced(informer: ResourceInformer): void {
    this.log({ level: 'info', event: 'watch.informer_synced', message: `informer ${informer.id} synced` });
    if (!this.synced) return;
    this.metrics.synced.set(1);
    if (!this.everSynced)
      this.log({
        level: 'info',
        event: 'watch.synced',
        message: 'every informer has synced',
        objects: this.cache.size,
      });
    this.everSynced = true;
    // The first publish (and, for an informer that started later, the one with its objects).
    this.debouncer.trigger();
  }

  // ---- compile and publish --------------------------------------------------------------------

  /**
   * Applies one object event as an informer does. With `compileNow`, it drives the watcher
   * without an API server (the benchmark's "one endpoint change reaches the store").
   */
  receive(raw: Raw, kind: string, deleted = false): void {
    this.apply(deleted ? this.cache.remove(raw) : this.cache.upsert(raw), kind, deleted ? 'deleted' : 'upsert');
  }

  /** Compiles and publishes now, without the debounce or the sync gate. Not while started. */
  compileNow(): Promise<RoundResult> {
    if (this.started) throw new Error('compileNow: the watcher is running; its rounds are debounced');
    return this.compileAndPublish();
  }

  private async round(waitedMs: number): Promise<void> {
    // Sync gate: rounds that fire before every informer listed are dropped; the last informer's
    // sync triggers the round that sees everything.
    if (!this.synced || this.stopped) return;
    this.metrics.debounceSeconds.observe(waitedMs / 1000);
    await this.compileAndPublish();
  }

  /** One round, as a list of steps (src/watch/round/). */
  private async compileAndPublish(): Promise<RoundResult> {
    const collect = this.completeRound() ? this.opts.collect : undefined;
    const changed = this.takeChanged();
    const { inputs, inputsMs } = this.updateInputs(changed);
    collect?.(); // the first round's stored inputs: their canonical bytes were made for every object
    // A full build's objects wait in a temp file, not in memory, until the publish streams them.
    const spool = RoundSpool.forStore(this.opts.store);
    const request = compileRequest(changed, inputs.digest, this.cache, this.lkg, spool);
    const { result, compileMs, stored } = await this.compileAndStore(request, changed, inputs).finally(() =>
      spool?.close(),
    );
    const round = this.record(roundResult(result.mode, { inputsMs, compileMs }, stored), changed);
    // After the published log line (relays are told first); a status problem never fails the round.
    try {
      this.writeStatus(request, result, stored);
    } catch (err) {
      this.log({ level: 'warn', event: 'watch.status_failed', message: 'status sync failed', error: errorText(err) });
    }
    return round;
  }

  private async compileAndStore(
    request: CompileRequest,
    changed: ReadonlySet<string>,
    inputs: BuiltInputs,
  ): Promise<{ readonly result: CompileResult; readonly compileMs: number; readonly stored: PublishedRound }> {
    const { result, compileMs } = await this.compile(request, changed);
    const stored = await this.publish(request, result, this.diagnostics(result), inputs);
    return { result, compileMs, stored };
  }

  /**
   * --write-status: the statuses of what the channel serves now. A refused round, or a config
   * change on a pinned channel (a candidate), is not served: its statuses would describe config
   * the proxies do not have, so they are not written.
   */
  private writeStatus(request: CompileRequest, result: CompileResult, stored: PublishedRound): void {
    if (!this.status) return;
    if (stored.refused || stored.pinned) {
      this.log({
        level: 'info',
        event: 'watch.status_not_written',
        message: `this round's config is not served (${stored.refused ? 'refused by the publish guard' : 'the channel is pinned'}); Gateway API statuses are left as they are`,
      });
      return;
    }
    // The generation of the object version compiled (a last-known-good one may be older than the cluster's).
    const generation = ({ kind, namespace, name }: ComputedStatus) =>
      request.get?.(keyString({ kind: kind === 'Gateway' ? KUBERNETES_GATEWAY_KIND : kind, namespace, name }))
        ?.generation;
    const queued = this.status.sync(computedStatuses(result.diagnostics), generation);
    if (queued > 0)
      this.log({ level: 'debug', event: 'watch.status_queued', message: `${queued} status(es) to write`, queued });
  }

  /** This round compiles and publishes everything: the first round, or one after a publish that may have failed. */
  private completeRound(): boolean {
    return this.inputsCommits === 0 || this.storeIncomplete;
  }

  /** The keys changed since the last round; events from now on go to the next one. */
  private takeChanged(): Set<string> {
    const changed = this.changedSinceCompile;
    this.changedSinceCompile = new Set();
    return changed;
  }

  private updateInputs(changed: ReadonlySet<string>): { readonly inputs: BuiltInputs; readonly inputsMs: number } {
    const ti = performance.now();
    this.inputsCommits++;
    const inputs = updateStoredInputs(changed, this.cache, this.lkg, this.inputsTree);
    this.metrics.lastKnownGood.set(this.lkg.substitutions().length);
    return { inputs, inputsMs: performance.now() - ti };
  }

  private async compile(
    request: CompileRequest,
    changed: ReadonlySet<string>,
  ): Promise<{ readonly result: CompileResult; readonly compileMs: number }> {
    if (this.storeIncomplete) this.compiler.invalidate?.();
    try {
      return await compileTimed(this.compiler, request, this.metrics);
    } catch (err) {
      // Keep the keys so the next round looks at them again; this round's inputs documents were
      // not stored, so the next publish writes them all.
      for (const k of changed) this.changedSinceCompile.add(k);
      this.storeIncomplete = true;
      throw err;
    }
  }

  /** The compile's diagnostics and the last-known-good substitutions' (which are logged). */
  private diagnostics(result: CompileResult): readonly Diagnostic[] {
    const lkgDiagnostics = this.lkg.diagnostics();
    for (const d of lkgDiagnostics)
      this.log({
        level: 'warn',
        event: 'watch.last_known_good',
        message: d.message,
        code: d.code,
        kind: d.kind,
        namespace: d.namespace,
        name: d.name,
        field: d.field,
      });
    return lkgDiagnostics.length > 0 ? sortDiagnostics([...lkgDiagnostics, ...result.diagnostics]) : result.diagnostics;
  }

  private async publish(
    request: CompileRequest,
    result: CompileResult,
    diagnostics: readonly Diagnostic[],
    inputs: BuiltInputs,
  ): Promise<PublishedRound> {
    let stored: PublishedRound;
    try {
      stored = await publishRound({
        store: this.opts.store,
        channel: this.opts.channel,
        snapshot: result.snapshot,
        diagnostics,
        inputs,
        inputsToWrite: () => (this.storeIncomplete ? this.inputsTree.complete() : inputs),
        ...(this.inputsBase && !this.storeIncomplete ? { inputsBase: this.inputsBase } : {}),
        allInputs: () => (this.inputsCommits === 1 ? inputs : this.inputsTree.complete()),
        objects: () => request.objects,
        provenance: () => this.changes.provenance(this.lkg.substitutions()),
        createdAt: () => (this.opts.now?.() ?? new Date()).toISOString(),
        packCache: this.packCache,
        ...(this.opts.hasher ? { hasher: this.opts.hasher } : {}),
        guard: this.guard,
      });
    } catch (err) {
      // What this round's delta builds on may be missing from the store: next time, everything.
      this.storeIncomplete = true;
      this.metrics.publishes.inc({ result: 'error' });
      throw err;
    }
    // A pinned or refused round stores other snapshots than the head, which the next delta would build on.
    this.storeIncomplete = stored.pinned || stored.refused !== undefined;
    if (stored.inputsRecorded) this.inputsBase = inputs.digest;
    this.metrics.publishes.inc({ result: stored.refused ? 'refused' : stored.published.status });
    if (stored.refused) {
      const { refused } = stored;
      const which =
        'pinned' in refused
          ? { message: pinnedRefusalMessage(this.opts.channel, refused), pinned: refused.pinned }
          : { message: refusalMessage(this.opts.channel, refused), candidate: refused.candidate };
      this.log({
        level: 'warn',
        event: 'watch.publish_refused',
        ...which,
        code: 'publish_guard',
        problems: refused.verdict.problems,
      });
    }
    return stored;
  }

  private record(round: RoundResult, changed: ReadonlySet<string>): RoundResult {
    if (round.publish === 'published') {
      this.changes.clear();
      this.metrics.version.set(round.version);
    }
    this.rounds.push(round);
    this.log({
      level: 'info',
      event:
        round.publish === 'published'
          ? 'watch.published'
          : round.publish === 'refused'
            ? 'watch.refused'
            : 'watch.unchanged',
      ...round,
      changed: changed.size,
      objects: this.cache.size,
    });
    return round;
  }
}

interface DeniedInformer {
  readonly status: number;
  readonly error: string;
  /** ISO time of the first failure with this status. */
  readonly since: string;
}

/** 403 (forbidden) or 404 (the resource is gone) from a list or a watch; undefined for anything else. */
function deniedStatus(err: unknown): number | undefined {
  const e = err as { statusCode?: unknown; code?: unknown } | null;
  const status = typeof e?.statusCode === 'number' ? e.statusCode : typeof e?.code === 'number' ? e.code : undefined;
  return status === 403 || status === 404 ? status : undefined;
}

function errorText(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return String(err);
}

export type { Raw };

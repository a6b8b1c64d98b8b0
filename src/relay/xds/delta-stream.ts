/**
 * Incremental (delta) xDS on one stream (ADS or a per-type service). Written from the xDS protocol:
 * https://www.envoyproxy.io/docs/envoy/latest/api-docs/xds_protocol#incremental-xds
 *
 * Per type the stream keeps what the proxy has: name → digest (the per-resource version), or ''
 * for "told it does not exist". Each response carries only resources whose digest differs and the
 * names that went away.
 */
import type { XdsType } from '../../xds/type-urls.js';
import type { ServedResource } from '../types.js';
import { checkNameCount } from './limits.js';
import { encodeDeltaFrame } from './responses.js';
import { StreamBase, relayTypeUrl, type RelayType } from './stream-base.js';

interface DeltaRequest {
  node?: { id?: string | null; metadata?: unknown } | null;
  type_url?: string | null;
  resource_names_subscribe?: string[] | null;
  resource_names_unsubscribe?: string[] | null;
  initial_resource_versions?: Record<string, string> | null;
  response_nonce?: string | null;
  error_detail?: { code?: number | null; message?: string | null } | null;
}

interface DeltaTypeState {
  wildcard: boolean;
  names: Set<string>;
  /** What the proxy has: name → digest, '' = told absent. */
  known: Map<string, string>;
  /** Responses not yet ACKed/NACKed, by nonce (a delta client may answer them in any order). */
  pending: Map<string, { version: string; snapshot: number }>;
}

const WILDCARD_TYPES: ReadonlySet<RelayType> = new Set(['clusters', 'listeners']);
const MAX_PENDING = 32;

export class DeltaStream extends StreamBase {
  private readonly types = new Map<RelayType, DeltaTypeState>();

  handle(raw: object): void {
    const req = raw as DeltaRequest;
    this.learnNode(req.node);
    const type = this.typeOf(req.type_url);
    if (!type) return;
    const typeUrl = relayTypeUrl(type);
    const subscribe = req.resource_names_subscribe ?? [];
    const unsubscribe = req.resource_names_unsubscribe ?? [];
    checkNameCount(
      subscribe.length + unsubscribe.length + Object.keys(req.initial_resource_versions ?? {}).length,
      this.ctx.limits,
    );
    let st = this.types.get(type);
    if (!st) {
      // First request of the type. LDS/CDS with nothing named is a wildcard subscription; "*"
      // subscribes to the wildcard explicitly.
      // https://www.envoyproxy.io/docs/envoy/latest/api-docs/xds_protocol#how-the-client-specifies-what-resources-to-return
      // initial_resource_versions says what the proxy already has (after a reconnect), so
      // unchanged resources are not sent again.
      // https://www.envoyproxy.io/docs/envoy/latest/api-docs/xds_protocol#incremental-xds
      const wildcard = subscribe.includes('*') || (subscribe.length === 0 && WILDCARD_TYPES.has(type));
      st = {
        wildcard,
        names: new Set(),
        known: new Map(Object.entries(req.initial_resource_versions ?? {})),
        pending: new Map(),
      };
      this.types.set(type, st);
    }

    const nonce = req.response_nonce ?? '';
    if (nonce !== '') {
      const sent = st.pending.get(nonce);
      if (sent) {
        st.pending.delete(nonce);
        // error_detail set: the proxy rejected that response and keeps what it had.
        // https://www.envoyproxy.io/docs/envoy/latest/api-docs/xds_protocol#ack-and-nack-semantics-summary
        if (req.error_detail)
          this.recordNack(
            typeUrl,
            sent.version,
            sent.snapshot,
            req.error_detail.message || `code ${req.error_detail.code ?? '?'}`,
          );
        else this.recordAck(typeUrl, sent.version, sent.snapshot);
      }
    }

    for (const name of subscribe) {
      if (name === '*') st.wildcard = true;
      else st.names.add(name);
    }
    for (const name of unsubscribe) {
      if (name === '*') st.wildcard = false;
      else {
        st.names.delete(name);
        // The proxy drops an unsubscribed resource; a later subscribe must send it again.
        if (!st.wildcard) st.known.delete(name);
      }
    }
    checkNameCount(st.names.size, this.ctx.limits);
    this.respond(type, st, false);
  }

  pushType(type: XdsType): void {
    const st = this.types.get(type);
    if (st && this.ready) this.respond(type, st, true);
  }

  pushSecrets(): void {
    const st = this.types.get('secrets');
    if (st && this.readyFor('secrets')) this.respond('secrets', st, false);
  }

  /** Sends what differs from what the proxy has; nothing when nothing differs. */
  private respond(type: RelayType, st: DeltaTypeState, sinceSwitch: boolean): void {
    if (!this.readyFor(type)) return;
    const snapshotVersion = this.ctx.snapshot?.version ?? 0;
    // Only what the proxy's class has (or, for secrets, what its identity may read): a name outside
    // it is answered as not existing, never served.
    const all =
      type === 'secrets'
        ? this.secretResources([...st.names])
        : (this.ctx.snapshot?.resources(this.classId, type) ?? new Map<string, ServedResource>());
    const changed: ServedResource[] = [];
    const removed: string[] = [];
    const wanted = new Set<string>(st.names);
    if (st.wildcard) for (const name of all.keys()) wanted.add(name);
    for (const name of [...wanted].sort()) {
      const r = all.get(name);
      if (r) {
        if (st.known.get(name) !== r.digest) {
          changed.push(r);
          st.known.set(name, r.digest);
        }
      } else if (st.known.get(name) !== '') {
        // A subscribed resource that does not exist (or no longer does) is reported in
        // removed_resources.
        // https://www.envoyproxy.io/docs/envoy/latest/api-docs/xds_protocol#knowing-when-a-requested-resource-does-not-exist
        removed.push(name);
        st.known.set(name, '');
      }
    }
    // Resources the proxy has that are no longer wanted (wildcard removals).
    for (const [name, digest] of st.known) {
      if (wanted.has(name)) continue;
      st.known.delete(name);
      if (digest !== '' && st.wildcard) removed.push(name);
    }
    if (changed.length === 0 && removed.length === 0) {
      this.markInSync(type, snapshotVersion);
      return;
    }
    const nonce = this.ctx.nextNonce();
    const version = String(snapshotVersion);
    st.pending.set(nonce, { version, snapshot: snapshotVersion });
    if (st.pending.size > MAX_PENDING) st.pending.delete(st.pending.keys().next().value as string);
    this.send(
      type,
      encodeDeltaFrame(version, relayTypeUrl(type), changed, removed, nonce),
      version,
      changed.length,
      undefined,
      sinceSwitch,
    );
  }
}

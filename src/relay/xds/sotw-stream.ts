/**
 * State of the World xDS on one stream (ADS or a per-type service). Written from the xDS protocol:
 * https://www.envoyproxy.io/docs/envoy/latest/api-docs/xds_protocol
 */
import type { XdsType } from '../../xds/type-urls.js';
import { SECRET_TYPE_URL } from '../sds/secret-material.js';
import { checkNameCount } from './limits.js';
import { contentKeyOf, encodeSotwBody, framedWithNonce, type SotwBody } from './responses.js';
import { WILDCARD_KEY } from './sotw-cache.js';
import { StreamBase, relayTypeUrl, type RelayType } from './stream-base.js';

interface SotwRequest {
  version_info?: string | null;
  node?: { id?: string | null; metadata?: unknown } | null;
  resource_names?: string[] | null;
  type_url?: string | null;
  response_nonce?: string | null;
  error_detail?: { code?: number | null; message?: string | null } | null;
}

interface SotwTypeState {
  wildcard: boolean;
  /** '*' or the sorted subscribed names joined by '\n' (the SotwCache key). */
  subscriptionKey: string;
  lastNonce?: string;
  /** What the last response carried: its version, content key and snapshot version. */
  sentVersion?: string;
  sentContentKey?: string;
  sentSnapshot?: number;
}

/** A stream's queued SotW response of a type, superseded by a newer one of the same type. */
const SOTW_KEY: Readonly<Record<RelayType, string>> = {
  clusters: 'sotw:clusters',
  endpoints: 'sotw:endpoints',
  listeners: 'sotw:listeners',
  routes: 'sotw:routes',
  secrets: 'sotw:secrets',
};

/** Types whose empty subscription means "everything" (legacy wildcard). */
const WILDCARD_TYPES: ReadonlySet<RelayType> = new Set(['clusters', 'listeners']);

export class SotwStream extends StreamBase {
  private readonly types = new Map<RelayType, SotwTypeState>();

  handle(raw: object): void {
    const req = raw as SotwRequest;
    this.learnNode(req.node);
    const type = this.typeOf(req.type_url);
    if (!type) return; // a type this relay does not serve (e.g. secrets without Kubernetes): no response
    const typeUrl = relayTypeUrl(type);
    let st = this.types.get(type);
    const first = st === undefined;
    const nonce = req.response_nonce ?? '';

    // A request whose nonce is not the latest one sent for its type answers an older response:
    // ignore it, a newer response is on its way.
    // https://www.envoyproxy.io/docs/envoy/latest/api-docs/xds_protocol#resource-updates
    if (st && nonce !== '' && nonce !== st.lastNonce) return;

    if (st && nonce !== '' && st.sentVersion !== undefined) {
      // ACK / NACK: error_detail set means the proxy rejected the response it names by nonce and
      // keeps its previous config.
      // https://www.envoyproxy.io/docs/envoy/latest/api-docs/xds_protocol#ack-nack-and-resource-type-instance-version
      if (req.error_detail)
        this.recordNack(
          typeUrl,
          st.sentVersion,
          st.sentSnapshot ?? 0,
          req.error_detail.message || `code ${req.error_detail.code ?? '?'}`,
        );
      else this.recordAck(typeUrl, st.sentVersion, st.sentSnapshot ?? 0);
    }

    // Subscription. For LDS and CDS an empty first request is a wildcard subscription, and "*"
    // asks for the wildcard explicitly; EDS/RDS name what they want.
    // https://www.envoyproxy.io/docs/envoy/latest/api-docs/xds_protocol#how-the-client-specifies-what-resources-to-return
    const names = req.resource_names ?? [];
    checkNameCount(names.length, this.ctx.limits);
    const wildcard =
      names.includes('*') || (names.length === 0 && WILDCARD_TYPES.has(type) && (first || st?.wildcard === true));
    const subscriptionKey = wildcard ? WILDCARD_KEY : subscriptionKeyOf(names);
    if (!st) {
      st = { wildcard, subscriptionKey };
      this.types.set(type, st);
    }
    const changed = first || st.subscriptionKey !== subscriptionKey;
    st.wildcard = wildcard;
    st.subscriptionKey = subscriptionKey;

    // Respond to a new or changed subscription, and to a fresh request (empty nonce, e.g. after a
    // reconnect); an ACK/NACK with the same subscription gets no response.
    if (changed || nonce === '') this.respond(type, st, false, true);
  }

  pushType(type: XdsType): void {
    const st = this.types.get(type);
    if (!st || !this.ready) return;
    this.respond(type, st, true, false);
  }

  pushSecrets(): void {
    const st = this.types.get('secrets');
    if (st && this.readyFor('secrets')) this.respond('secrets', st, false, false);
  }

  /**
   * Sends the current resources of a type for the stream's subscription. On a snapshot switch
   * (`onlyIfChanged`) nothing is sent when the proxy's resources of the type did not change.
   */
  private respond(type: RelayType, st: SotwTypeState, sinceSwitch: boolean, force: boolean): void {
    if (!this.readyFor(type)) return; // before the first snapshot: streams wait, they get it on setSnapshot
    if (!st.wildcard && st.subscriptionKey === '' && st.sentVersion === undefined) return; // subscribed to nothing yet
    const snapshotVersion = this.ctx.snapshot?.version ?? 0;
    const body = type === 'secrets' ? this.secretsBody(st.subscriptionKey) : this.snapshotBody(type, st);
    if (!body) return;
    if (!force && body.contentKey === st.sentContentKey) {
      this.markInSync(type, snapshotVersion);
      return;
    }
    // A switch's push is the same frame for every stream it goes to (SotwCache.pushFrame); any other
    // response gets a nonce of its own.
    const cache = sinceSwitch && type !== 'secrets' ? this.ctx.sotwCache : undefined;
    const nonce = cache ? cache.pushNonce : this.ctx.nextNonce();
    st.lastNonce = nonce;
    st.sentVersion = body.version;
    st.sentContentKey = body.contentKey;
    st.sentSnapshot = snapshotVersion;
    const frame = cache ? cache.pushFrame(body) : framedWithNonce(body.prefix, nonce);
    // Key: a newer response of the same type replaces one still queued (it would be stale anyway).
    this.send(type, frame, body.version, body.count, SOTW_KEY[type], sinceSwitch);
  }

  private snapshotBody(type: XdsType, st: SotwTypeState): SotwBody | undefined {
    return this.ctx.sotwCache?.body(this.classId, type, st.subscriptionKey);
  }

  /** Secrets are per identity, not per class: built per stream (there are few, and they are small). */
  private secretsBody(subscriptionKey: string): SotwBody {
    const names = subscriptionKey === '' ? [] : subscriptionKey.split('\n');
    const list = [...this.secretResources(names).values()].sort((a, b) => (a.name < b.name ? -1 : 1));
    const key = contentKeyOf(list);
    return encodeSotwBody(SECRET_TYPE_URL, key, list, `n:${key}`);
  }
}

/** The sorted distinct names joined by '\n' (an ACK repeats its names: one or two need no sort). */
function subscriptionKeyOf(names: readonly string[]): string {
  if (names.length === 0) return '';
  if (names.length === 1) return names[0] as string;
  return [...new Set(names)].sort().join('\n');
}

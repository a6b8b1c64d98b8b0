/**
 * What SotW and delta streams share: the proxy's identity and class, per-type status (sent,
 * ACKed, last NACK), events, bounded writes, and ending with a gRPC status.
 */
import * as grpc from '@grpc/grpc-js';
import { XDS_TYPES, XDS_TYPE_URL, xdsTypeOfUrl, type XdsType } from '../../xds/type-urls.js';
import type { ProxyStatus, ServedResource, ServedSnapshot } from '../types.js';
import type { StreamContext } from './context.js';
import type { StreamWriter } from './fanout.js';
import type { Frame } from './grpc-frames.js';
import { clip, forLog } from '../client-text.js';
import { checkNodeIdentity } from '../security/authorize.js';
import type { ProxyIdentity } from '../security/identity.js';
import { SECRET_TYPE_URL } from '../sds/secret-material.js';
import { checkNode } from './limits.js';
import { nodeOf, type NodeInfo } from './node.js';
import { StatusError } from './status-error.js';
import { relayTypeUrl, type RelayType } from './relay-type.js';

export { relayTypeUrl, type RelayType };

export type XdsCall = grpc.ServerDuplexStream<object, object | Uint8Array>;

interface TypeStatus {
  sent?: string;
  acked?: string;
  nack?: { version: string; error: string; at: string };
  /** Snapshot version of the state the proxy has ACKed for this type. */
  ackedSnapshot?: number;
  /** True while a sent response of this type is not yet ACKed or NACKed. */
  outstanding: boolean;
}

export { StatusError };

/** The gRPC code for a failed placement: an unknown namespace/class is NOT_FOUND, anything else is a bad node. */
export function placementCode(reason: string): grpc.status {
  return /not in the mesh snapshot|no class|not found/i.test(reason)
    ? grpc.status.NOT_FOUND
    : grpc.status.INVALID_ARGUMENT;
}

const NO_SECRETS: ReadonlySet<string> = new Set();

export abstract class StreamBase {
  nodeId = '';
  classId = '';
  node: NodeInfo | undefined;
  /** Who the proxy proved to be; undefined for an anonymous stream (`--insecure`). */
  identity: ProxyIdentity | undefined;
  /** May the identity read certificates with keys of its namespace over SDS. */
  mayReadKeys = false;
  readonly connectedAt = new Date();
  protected readonly typeStatus = new Map<string, TypeStatus>();
  private ended = false;

  constructor(
    readonly streamId: string,
    readonly protocol: 'sotw' | 'delta',
    protected readonly call: XdsCall,
    protected readonly ctx: StreamContext,
    protected readonly writer: StreamWriter,
    /** The type of a per-type service (CDS, EDS, …, SDS); undefined on ADS. */
    protected readonly fixedType: RelayType | undefined,
  ) {}

  get isEnded(): boolean {
    return this.ended;
  }

  /** Handles one decoded request; errors end the stream with their status. */
  abstract handle(req: object): void;
  /** Pushes what changed of one type after a snapshot switch (called in CDS, EDS, LDS, RDS order). */
  abstract pushType(type: XdsType): void;

  /**
   * Learns the node from the first request that carries one and places it in a class. The node is
   * only required on the first request of a stream
   * (https://www.envoyproxy.io/docs/envoy/latest/api-docs/xds_protocol#basic-protocol-overview).
   */
  protected learnNode(raw: { id?: string | null; metadata?: unknown } | null | undefined): void {
    if (this.node) return;
    const node = nodeOf(raw);
    if (!node || !node.id)
      throw new StatusError(grpc.status.INVALID_ARGUMENT, 'the first request of a stream must carry node.id');
    checkNode(node, this.ctx.limits);
    if (this.identity) {
      // istiod's authorize(): the node must be what the identity may be (PERMISSION_DENIED).
      const check = checkNodeIdentity(node.id, node.metadata, this.identity);
      if (!check.ok) {
        this.ctx.emit({
          kind: 'rejected',
          nodeId: node.id,
          reason: check.reason,
          identity: this.identity.principal,
          at: Date.now(),
        });
        throw new StatusError(grpc.status.PERMISSION_DENIED, `authorization failed: ${check.reason}`);
      }
    }
    this.node = node;
    this.nodeId = node.id;
    if (this.fixedType === 'secrets') {
      // An SDS-only stream is not placed in a snapshot class: it serves only secrets.
      this.emitConnect();
      return;
    }
    const snapshot = this.ctx.snapshot;
    if (snapshot) this.place(snapshot);
  }

  private emitConnect(): void {
    this.ctx.emit({
      kind: 'connect',
      streamId: this.streamId,
      nodeId: this.nodeId,
      classId: this.classId,
      protocol: this.protocol,
      at: Date.now(),
      ...this.identityField(),
    });
  }

  /** `{ identity }` for events of an authenticated stream. */
  protected identityField(): { readonly identity?: string } {
    return this.identity ? { identity: this.identity.principal } : {};
  }

  /** (Re)places the node in a class of a snapshot; a failure ends the stream with the reason. */
  place(snapshot: ServedSnapshot): boolean {
    if (!this.node) return false;
    if (this.fixedType === 'secrets') return false;
    const placed = snapshot.classify(this.node);
    if (!placed.ok) {
      this.ctx.emit({
        kind: 'rejected',
        nodeId: this.nodeId,
        reason: placed.reason,
        at: Date.now(),
        ...this.identityField(),
      });
      this.fail(new StatusError(placementCode(placed.reason), placed.reason));
      return false;
    }
    const first = this.classId === '';
    this.classId = placed.classId;
    if (first) this.emitConnect();
    return true;
  }

  /** True when responses can be computed: a snapshot is loaded and the node is placed. */
  protected get ready(): boolean {
    return !this.ended && this.ctx.snapshot !== undefined && this.classId !== '';
  }

  /** True when a type can be answered: secrets need only the (authorized) node. */
  protected readyFor(type: RelayType): boolean {
    return type === 'secrets' ? !this.ended && this.node !== undefined : this.ready;
  }

  /**
   * The SDS resources this stream may have of the names it asked for. Names refused (another
   * namespace, no right to keys, not authenticated) are left out, as istiod does, and reported
   * once per stream and name.
   */
  protected secretResources(names: readonly string[]): ReadonlyMap<string, ServedResource> {
    const resolver = this.ctx.secrets;
    if (!resolver) return new Map();
    const { resources, denied } = resolver.resolve(
      { identity: this.identity, mayReadKeys: this.mayReadKeys, verifiedSecrets: this.verifiedSecrets() },
      names,
    );
    for (const d of denied) {
      if (this.deniedSecrets.has(d.name)) continue;
      this.deniedSecrets.add(d.name);
      this.ctx.emit({
        kind: 'secret-denied',
        nodeId: this.nodeId,
        name: d.name,
        reason: d.reason,
        at: Date.now(),
        ...this.identityField(),
      });
    }
    return resources;
  }

  private readonly deniedSecrets = new Set<string>();

  /**
   * The `kubernetes-gateway://` names the proxy's class may have in the current snapshot. An
   * SDS-only stream is not placed: its node is classified here, without failing the stream.
   */
  private verifiedSecrets(): ReadonlySet<string> {
    const snapshot = this.ctx.snapshot;
    if (!snapshot || !this.node) return NO_SECRETS;
    if (this.classId) return snapshot.verifiedSecrets(this.classId);
    const placed = snapshot.classify(this.node);
    return placed.ok ? snapshot.verifiedSecrets(placed.classId) : NO_SECRETS;
  }

  /** Re-sends the secrets this stream subscribed to when they changed (a Secret was updated). */
  abstract pushSecrets(): void;

  /** The type of a request's type_url (per-type services may leave it empty). */
  protected typeOf(typeUrl: string | null | undefined): RelayType | undefined {
    if (this.fixedType) {
      const own = relayTypeUrl(this.fixedType);
      if (typeUrl && typeUrl !== own)
        throw new StatusError(grpc.status.INVALID_ARGUMENT, `this service serves ${own}, not ${typeUrl}`);
      return this.fixedType;
    }
    if (!typeUrl) throw new StatusError(grpc.status.INVALID_ARGUMENT, 'ADS requests must set type_url');
    if (typeUrl === SECRET_TYPE_URL) return this.ctx.secrets ? 'secrets' : undefined;
    return xdsTypeOfUrl(typeUrl);
  }

  protected status(typeUrl: string): TypeStatus {
    let s = this.typeStatus.get(typeUrl);
    if (!s) {
      s = { outstanding: false };
      this.typeStatus.set(typeUrl, s);
    }
    return s;
  }

  /** Queues a response (its gRPC frame); `push` event and latency when grpc-js has taken it. */
  protected send(
    type: RelayType,
    frame: Frame,
    version: string,
    resources: number,
    key: string | undefined,
    sinceSwitch: boolean,
  ): void {
    const typeUrl = relayTypeUrl(type);
    const snapshotVersion = this.ctx.snapshot?.version ?? 0;
    const s = this.status(typeUrl);
    s.sent = version;
    s.outstanding = true;
    const started = sinceSwitch ? this.ctx.switchedAt : Date.now();
    this.writer.push({
      bytes: frame,
      key,
      onWritten: (err) => {
        if (err) return;
        this.ctx.emit({
          kind: 'push',
          streamId: this.streamId,
          nodeId: this.nodeId,
          typeUrl,
          version,
          snapshotVersion,
          resources,
          at: Date.now(),
          latencyMs: Date.now() - started,
        });
      },
    });
  }

  protected recordAck(typeUrl: string, version: string, snapshotVersion: number): void {
    const s = this.status(typeUrl);
    s.acked = version;
    s.ackedSnapshot = snapshotVersion;
    s.outstanding = false;
    this.ctx.emit({
      kind: 'ack',
      streamId: this.streamId,
      nodeId: this.nodeId,
      classId: this.classId,
      typeUrl,
      version,
      snapshotVersion,
      at: Date.now(),
      ...this.identityField(),
    });
  }

  /** A NACK: recorded and reported; the proxy stays on its last ACKed version (nothing is resent). */
  protected recordNack(typeUrl: string, version: string, snapshotVersion: number, detail: string): void {
    // error_detail is the proxy's text: bounded before it is kept, audited or logged.
    const error = clip(detail, this.ctx.limits.maxErrorDetailLength).text;
    const s = this.status(typeUrl);
    s.nack = { version, error, at: new Date().toISOString() };
    s.outstanding = false;
    this.ctx.emit({
      kind: 'nack',
      streamId: this.streamId,
      nodeId: this.nodeId,
      classId: this.classId,
      typeUrl,
      version,
      snapshotVersion,
      error,
      at: Date.now(),
      ...this.identityField(),
    });
    this.ctx.log(
      `xds: NACK node=${forLog(this.nodeId)} type=${forLog(typeUrl)} version=${forLog(version)}: ${forLog(error)}`,
    );
  }

  /** After a switch that changed nothing of a type the proxy is in sync on, it is at the new snapshot. */
  protected markInSync(type: RelayType, snapshotVersion: number): void {
    const s = this.typeStatus.get(relayTypeUrl(type));
    if (s && !s.outstanding && s.acked !== undefined && s.acked === s.sent) s.ackedSnapshot = snapshotVersion;
  }

  proxyStatus(): ProxyStatus {
    const types: Record<
      string,
      { sent?: string; acked?: string; nack?: { version: string; error: string; at: string } }
    > = {};
    let snapshotVersion: number | undefined;
    let complete = this.typeStatus.size > 0;
    for (const type of XDS_TYPES) {
      const url = XDS_TYPE_URL[type];
      const s = this.typeStatus.get(url);
      if (!s) continue;
      types[url] = {
        ...(s.sent !== undefined ? { sent: s.sent } : {}),
        ...(s.acked !== undefined ? { acked: s.acked } : {}),
        ...(s.nack ? { nack: s.nack } : {}),
      };
      if (s.ackedSnapshot === undefined) complete = false;
      else
        snapshotVersion = snapshotVersion === undefined ? s.ackedSnapshot : Math.min(snapshotVersion, s.ackedSnapshot);
    }
    return {
      streamId: this.streamId,
      nodeId: this.nodeId,
      classId: this.classId,
      protocol: this.protocol,
      connectedAt: this.connectedAt.toISOString(),
      ...(this.identity ? { identity: { principal: this.identity.principal, method: this.identity.method } } : {}),
      types,
      ...(complete && snapshotVersion !== undefined ? { snapshotVersion } : {}),
    };
  }

  /** Ends the stream with an error status (the reason reaches the proxy). */
  fail(err: StatusError): void {
    if (this.ended) return;
    this.ended = true;
    this.writer.close();
    this.call.emit('error', { code: err.code, details: err.message });
  }

  /** Ends the stream with status OK (graceful drain: the proxy reconnects elsewhere). */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.writer.close();
    this.call.end();
  }

  /** The stream closed from the other side. */
  closed(): void {
    this.ended = true;
    this.writer.close();
  }
}

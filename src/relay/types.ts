/**
 * Contracts inside the relay: the loaded snapshot the xDS server serves from, and what the xDS
 * server reports about each proxy. The relay never compiles: it serves stored bytes.
 */
import type { XdsType } from '../xds/type-urls.js';

/** One resource as served: its name, the digest (= its per-resource version) and its protobuf bytes. */
export interface ServedResource {
  readonly name: string;
  readonly digest: string;
  readonly bytes: Uint8Array;
}

/** `code` (when set) says which gRPC status fits a refusal: a malformed node vs one the snapshot has no class for. */
export type Placement =
  | { readonly ok: true; readonly classId: string }
  | { readonly ok: false; readonly reason: string; readonly code?: 'invalid-argument' | 'not-found' };

/** A snapshot fully loaded into memory and verified (every object's digest checked). */
export interface ServedSnapshot {
  /** Channel version number, e.g. 7. */
  readonly version: number;
  /** Snapshot digest `sha256:…`. */
  readonly digest: string;
  /** Places a node (id + metadata as plain JSON) into a proxy class. */
  classify(node: { readonly id: string; readonly metadata: Readonly<Record<string, unknown>> }): Placement;
  /** The resources a class gets of a type, by name (undefined for an unknown class). */
  resources(classId: string, type: XdsType): ReadonlyMap<string, ServedResource> | undefined;
  /** A short stable version string for a class's resources of one type (changes iff they change). */
  typeVersion(classId: string, type: XdsType): string;
  /** The `kubernetes-gateway://` SDS names a class may be served (empty for an unknown class). */
  verifiedSecrets(classId: string): ReadonlySet<string>;
}

/** What happened on a stream, for the status page, metrics and the audit log. */
export type XdsEvent =
  | {
      readonly kind: 'connect';
      readonly streamId: string;
      readonly nodeId: string;
      readonly classId: string;
      readonly protocol: 'sotw' | 'delta';
      readonly at: number;
      /** The authenticated identity (SPIFFE URI) beside the node id the proxy claims. */
      readonly identity?: string;
    }
  | { readonly kind: 'disconnect'; readonly streamId: string; readonly nodeId: string; readonly at: number }
  | {
      readonly kind: 'push';
      readonly streamId: string;
      readonly nodeId: string;
      readonly typeUrl: string;
      readonly version: string;
      readonly snapshotVersion: number;
      readonly resources: number;
      readonly at: number;
      readonly latencyMs?: number;
    }
  | {
      readonly kind: 'ack';
      readonly streamId: string;
      readonly nodeId: string;
      readonly classId: string;
      readonly typeUrl: string;
      readonly version: string;
      readonly snapshotVersion: number;
      readonly at: number;
      readonly identity?: string;
    }
  | {
      readonly kind: 'nack';
      readonly streamId: string;
      readonly nodeId: string;
      readonly classId: string;
      readonly typeUrl: string;
      readonly version: string;
      readonly snapshotVersion: number;
      readonly error: string;
      readonly at: number;
      readonly identity?: string;
    }
  | {
      readonly kind: 'rejected';
      readonly nodeId: string;
      readonly reason: string;
      readonly at: number;
      readonly identity?: string;
    }
  /** An SDS name refused to a stream that goes on (logged, not audited: the proxy stays connected). */
  | {
      readonly kind: 'secret-denied';
      readonly nodeId: string;
      readonly name: string;
      readonly reason: string;
      readonly at: number;
      readonly identity?: string;
    };

/** Per-proxy status, as `istioctl proxy-status` shows it. */
export interface ProxyStatus {
  readonly streamId: string;
  readonly nodeId: string;
  readonly classId: string;
  readonly protocol: 'sotw' | 'delta';
  readonly connectedAt: string;
  /** The authenticated identity and how it was proven; absent for an anonymous stream (`--insecure`). */
  readonly identity?: { readonly principal: string; readonly method: string };
  /** Per type URL: version last sent, version last ACKed, last NACK. */
  readonly types: Readonly<
    Record<
      string,
      {
        readonly sent?: string;
        readonly acked?: string;
        readonly nack?: { readonly version: string; readonly error: string; readonly at: string };
      }
    >
  >;
  /** Snapshot version of the last push the proxy fully ACKed. */
  readonly snapshotVersion?: number;
}

/**
 * Bounds on what an xDS client may send the relay (README "Limits"): an unauthenticated client
 * must not be able to exhaust memory, flood the audit log or keep the relay busy.
 */
import * as grpc from '@grpc/grpc-js';
import type { NodeInfo } from './node.js';
import { LimitExceeded } from './status-error.js';

export interface ClientLimits {
  /** Longest node.id accepted (characters); longer: the stream is refused with INVALID_ARGUMENT. */
  readonly maxNodeIdLength: number;
  /** Largest node.metadata accepted, as JSON (characters); larger: refused with INVALID_ARGUMENT. */
  readonly maxNodeMetadataBytes: number;
  /** Resource names in one request, and subscribed per type on a delta stream; more: INVALID_ARGUMENT. */
  readonly maxResourceNames: number;
  /** NACK error_detail kept (characters); longer is truncated, with a note saying so. */
  readonly maxErrorDetailLength: number;
  /** Sustained requests per stream per second… */
  readonly requestsPerSecond: number;
  /** …after a burst of this many; beyond it the stream is closed with RESOURCE_EXHAUSTED. */
  readonly requestBurst: number;
}

export const DEFAULT_CLIENT_LIMITS: ClientLimits = {
  maxNodeIdLength: 1024,
  maxNodeMetadataBytes: 64 * 1024,
  maxResourceNames: 100_000,
  maxErrorDetailLength: 4096,
  requestsPerSecond: 50,
  requestBurst: 200,
};

/** Refuses a node whose id or metadata is over the limits. */
export function checkNode(node: NodeInfo, limits: ClientLimits): void {
  if (node.id.length > limits.maxNodeIdLength) {
    throw new LimitExceeded(
      grpc.status.INVALID_ARGUMENT,
      `node.id is ${node.id.length} characters; this relay accepts at most ${limits.maxNodeIdLength}`,
    );
  }
  const metadata = JSON.stringify(node.metadata).length;
  if (metadata > limits.maxNodeMetadataBytes) {
    throw new LimitExceeded(
      grpc.status.INVALID_ARGUMENT,
      `node.metadata is ${metadata} bytes as JSON; this relay accepts at most ${limits.maxNodeMetadataBytes}`,
    );
  }
  // The locality names a class variant (`<class>@<region>/<zone>/<subzone>`): as long as an id at most.
  const l = node.locality;
  const locality = l ? l.region.length + l.zone.length + l.subZone.length : 0;
  if (locality > limits.maxNodeIdLength) {
    throw new LimitExceeded(
      grpc.status.INVALID_ARGUMENT,
      `node.locality is ${locality} characters; this relay accepts at most ${limits.maxNodeIdLength}`,
    );
  }
}

/** Refuses a request (or a delta subscription) naming more resources than allowed. */
export function checkNameCount(count: number, limits: ClientLimits): void {
  if (count > limits.maxResourceNames) {
    throw new LimitExceeded(
      grpc.status.INVALID_ARGUMENT,
      `${count} resource names in one request or subscription; this relay accepts at most ${limits.maxResourceNames}`,
    );
  }
}

/** Token bucket of one stream's requests: `take()` is false once the stream is over its rate. */
export class RequestRate {
  private tokens: number;
  private last: number;

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    private readonly now: () => number = Date.now,
  ) {
    this.tokens = burst;
    this.last = now();
  }

  take(): boolean {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) / 1000) * this.perSecond);
    this.last = t;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

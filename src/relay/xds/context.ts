/**
 * What every stream shares with the server: the snapshot being served, the response cache of that
 * snapshot, nonces, events and the bounded writer.
 */
import type { SecretResolver } from '../sds/secret-resolver.js';
import type { ServedSnapshot, XdsEvent } from '../types.js';
import type { Fanout } from './fanout.js';
import type { ClientLimits } from './limits.js';
import type { SotwCache } from './sotw-cache.js';

export interface StreamContext {
  readonly snapshot: ServedSnapshot | undefined;
  readonly sotwCache: SotwCache | undefined;
  /** When the current snapshot was switched to (ms epoch), for push latency. */
  readonly switchedAt: number;
  readonly fanout: Fanout;
  readonly limits: ClientLimits;
  /** SDS from Kubernetes Secrets; undefined when the relay has no Kubernetes access (no secrets served). */
  readonly secrets: SecretResolver | undefined;
  nextNonce(): string;
  emit(e: XdsEvent): void;
  log(line: string): void;
}

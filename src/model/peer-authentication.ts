/**
 * Istio security resource `PeerAuthentication` (security.istio.io v1/v1beta1): which mutual TLS a
 * workload accepts on its inbound side. The inputs layer validates raw documents into these types.
 */
import type { Origin } from './diagnostics.js';
import type { ObjectMeta } from './k8s.js';

/** `UNSET` inherits from the wider scope (port → workload → namespace → mesh; PERMISSIVE at the top). */
export type MtlsMode = 'UNSET' | 'DISABLE' | 'PERMISSIVE' | 'STRICT';

/** A mode after inheritance: what an inbound filter chain is built for. */
export type EffectiveMtlsMode = Exclude<MtlsMode, 'UNSET'>;

export interface PeerAuthenticationSpec {
  readonly selector?: { readonly matchLabels?: Readonly<Record<string, string>> };
  readonly mtls?: { readonly mode?: MtlsMode };
  /** Keyed by the workload's (target) port number. Only with a selector. */
  readonly portLevelMtls?: Readonly<Record<string, { readonly mode?: MtlsMode }>>;
}

export interface PeerAuthentication {
  readonly kind: 'PeerAuthentication';
  readonly apiVersion: string;
  readonly meta: ObjectMeta;
  /** RFC 3339 as the API server writes it; the oldest policy of a scope wins, as in istiod. */
  readonly creationTimestamp?: string;
  readonly origin: Origin;
  readonly spec: PeerAuthenticationSpec;
}

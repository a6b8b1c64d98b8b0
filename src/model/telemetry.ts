/**
 * Istio's Telemetry (telemetry.istio.io v1, v1alpha1), as the compiler reads it: the access
 * logging of a namespace-wide one (no selector, no targetRef). Workload-selected ones, tracing,
 * metrics and access log filters are reported at validation and not applied.
 */
import type { Origin } from './diagnostics.js';
import type { ObjectMeta } from './k8s.js';

/** AccessLogging.match.mode: absent means CLIENT_AND_SERVER. */
export type TelemetryLogMode = 'CLIENT' | 'SERVER';

/** One `accessLogging[]` entry (the compiler reads these fields only). */
export interface TelemetryAccessLogging {
  /** `providers[].name`, in order; absent: the parent's (istiod's mergeLogs). */
  readonly providers?: readonly string[];
  /** `match.mode` when CLIENT or SERVER. */
  readonly mode?: TelemetryLogMode;
  /** `disabled: true`. */
  readonly disabled?: true;
}

export interface Telemetry {
  readonly kind: 'Telemetry';
  readonly apiVersion: string;
  readonly meta: ObjectMeta;
  /** istiod takes a namespace's oldest namespace-wide Telemetry (creationTimestamp, then name). */
  readonly creationTimestamp?: string;
  readonly origin: Origin;
  /** It sets a selector, targetRef or targetRefs: not namespace-wide (not applied by meshsnap). */
  readonly selects?: true;
  /** `accessLogging`, when it has entries. */
  readonly accessLogging?: readonly TelemetryAccessLogging[];
}

/**
 * Istio's Telemetry (telemetry.istio.io v1, v1alpha1), as the compiler reads it: its access logging
 * and what it selects (namespace-wide without a selector or targetRef; else the workloads its
 * `selector.matchLabels` or its Gateway API Gateway `targetRef(s)` pick). Tracing, metrics and
 * access log filters are reported at validation and not applied.
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

/** A `targetRef(s)` entry (`namespace` is the Telemetry's: another one is refused at validation). */
export interface TelemetryTargetRef {
  readonly group?: string;
  readonly kind: string;
  readonly name: string;
}

/** istiod's config.CanonicalGroup: the empty group is `core`. */
export const canonicalGroup = (group: string | undefined): string => (group ? group : 'core');

/**
 * A targetRef to a Gateway API Gateway (istiod's matchesGroupKind with gvk.KubernetesGateway): the
 * only kind istiod attaches to proxies other than waypoints, those labelled
 * `gateway.networking.k8s.io/gateway-name: <name>` of the Telemetry's namespace.
 */
export const isGatewayRef = (x: { readonly group?: string; readonly kind: string }): boolean =>
  canonicalGroup(x.group) === 'gateway.networking.k8s.io' && x.kind === 'Gateway';

export interface Telemetry {
  readonly kind: 'Telemetry';
  readonly apiVersion: string;
  readonly meta: ObjectMeta;
  /** istiod takes a namespace's oldest namespace-wide Telemetry (creationTimestamp, then name). */
  readonly creationTimestamp?: string;
  readonly origin: Origin;
  /** It sets a selector, targetRef or targetRefs: not namespace-wide. */
  readonly selects?: true;
  /** `selector.matchLabels`, when not empty. */
  readonly matchLabels?: Readonly<Record<string, string>>;
  /** `targetRefs`, or `targetRef` when there are none (istiod's GetTargetRefs). */
  readonly targetRefs?: readonly TelemetryTargetRef[];
  /** `accessLogging`, when it has entries. */
  readonly accessLogging?: readonly TelemetryAccessLogging[];
}

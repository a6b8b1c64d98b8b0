/**
 * Istio's Telemetry (telemetry.istio.io v1, v1alpha1), as the compiler reads it: its access logging
 * and what it selects (namespace-wide without a selector or targetRef; else the workloads its
 * `selector.matchLabels` or its Gateway API Gateway `targetRef(s)` pick), its access logging and
 * its tracing. Metrics and access log filters are reported at validation and not applied.
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

/** A Telemetry `tracing[].customTags` value (istiod's buildCustomTagsFromProvider). */
export type TelemetryCustomTag =
  | { readonly literal: string }
  | { readonly environment: { readonly name: string; readonly defaultValue?: string } }
  | { readonly header: { readonly name: string; readonly defaultValue?: string } }
  /** `formatter.value` (Istio 1.29+): Envoy's CustomTag of the API meshsnap encodes has no such kind. */
  | { readonly formatter: string };

/**
 * One `tracing[]` entry, as istiod's Telemetries.Tracing merges them (pilot/pkg/model/telemetry.go):
 * each set field overrides what the levels before it set, for the modes it matches.
 */
export interface TelemetryTracing {
  /** `match.mode` when CLIENT or SERVER; absent: both. */
  readonly mode?: TelemetryLogMode;
  /** `providers[].name`, in order; istiod uses the first. Absent: the parent's. */
  readonly providers?: readonly string[];
  readonly disableSpanReporting?: boolean;
  /** `customTags` when given (even empty): it replaces the parent's map as a whole. By tag name. */
  readonly customTags?: Readonly<Record<string, TelemetryCustomTag>>;
  readonly randomSamplingPercentage?: number;
  readonly useRequestIdForTraceSampling?: boolean;
  readonly enableIstioTags?: boolean;
  readonly disableContextPropagation?: boolean;
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
  /** `tracing`, when it has entries (istiod merges them all, in order). */
  readonly tracing?: readonly TelemetryTracing[];
}

/**
 * The status a compile computes for a Gateway API object (GatewayClass, Gateway, HTTPRoute,
 * GRPCRoute, TCPRoute, TLSRoute), shaped as the object's `status` subresource.
 *
 * The compile is deterministic, so conditions carry no `lastTransitionTime`: the status writer
 * (`meshsnap watch --write-status`) adds it, keeping the previous time for a condition whose
 * status did not change. It travels in the snapshot's diagnostics: one `info` diagnostic with code
 * `gateway-api-status` per object, naming kind/namespace/name, with `status` set.
 */

export const STATUS_DIAGNOSTIC_CODE = 'gateway-api-status';

/** The controller meshsnap reports as (Istio's, so Istio's GatewayClass `istio` is ours). */
export const GATEWAY_CONTROLLER_NAME = 'istio.io/gateway-controller';

export interface StatusCondition {
  /** `Accepted`, `ResolvedRefs`, `Programmed`, `ListenersNotValid`, … */
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  /** A reason from the Gateway API spec: `Accepted`, `NoMatchingParent`, `NotAllowedByListeners`, `RefNotPermitted`, `BackendNotFound`, … */
  readonly reason: string;
  readonly message: string;
  /** The object's metadata.generation the conditions were computed from, when it has one. */
  readonly observedGeneration?: number;
}

/** A route's parentRef as the route wrote it (defaults filled as the spec reports them). */
export interface StatusParentReference {
  readonly group?: string;
  readonly kind?: string;
  readonly namespace?: string;
  readonly name: string;
  readonly sectionName?: string;
  readonly port?: number;
}

export interface RouteParentStatus {
  readonly parentRef: StatusParentReference;
  readonly controllerName: string;
  readonly conditions: readonly StatusCondition[];
}

export interface ListenerStatus {
  readonly name: string;
  readonly supportedKinds: readonly { readonly group?: string; readonly kind: string }[];
  readonly attachedRoutes: number;
  readonly conditions: readonly StatusCondition[];
}

export interface GatewayClassStatus {
  readonly conditions: readonly StatusCondition[];
}

export interface GatewayStatus {
  readonly conditions: readonly StatusCondition[];
  readonly listeners: readonly ListenerStatus[];
  readonly addresses?: readonly { readonly type?: string; readonly value: string }[];
}

/** HTTPRoute, GRPCRoute, TCPRoute, TLSRoute: one entry per parentRef meshsnap is responsible for. */
export interface RouteStatus {
  readonly parents: readonly RouteParentStatus[];
}

export type ObjectStatus = GatewayClassStatus | GatewayStatus | RouteStatus;

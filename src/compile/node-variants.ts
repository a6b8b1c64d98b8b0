/**
 * EDS assignments that depend on the proxy's Kubernetes node: node-local services'
 * (`internalTrafficPolicy: Local`: istiod's EndpointBuilder drops every endpoint whose node, its
 * pod's `spec.nodeName`, is not the proxy's NODE_NAME) and PreferSameNode services' (istiod's
 * failoverPriority ends with the node: priorities by the proxy's node and locality). The
 * translator records, per assignment, what a proxy on each node of the mesh gets and what a proxy
 * of no known node gets; scope/node-groups.ts moves it into per-node groups
 * (../proxy-class/node-local.ts). Whether an assignment has node variants depends on the
 * Service's policy (and DestinationRule) only, never on its endpoints: an endpoint change never
 * moves it between groups.
 */

import { deriveVariants } from './locality-variants.js';

/** What a proxy on each node of the mesh gets, and what a proxy of no known node gets. */
export interface NodeVariants<M extends object = object> {
  /** For a proxy without a node of the mesh (istiod's empty node name): node-local, the endpoints without a node. */
  readonly base: M;
  /** By node name, one per `model.proxyNodes` (absent: a node-local assignment without endpoints there, `empty`). */
  readonly byNode: ReadonlyMap<string, M>;
  /** The variant of a node none of whose endpoints the assignment has. */
  readonly empty: M;
}

const variants = new WeakMap<object, NodeVariants>();

export const nodeVariantsOf = <M extends object>(resource: M): NodeVariants<M> | undefined =>
  variants.get(resource) as NodeVariants<M> | undefined;

export function recordNodeVariants<M extends object>(resource: M, v: NodeVariants<M>): void {
  variants.set(resource, v);
}

/** The variant of `node` (one of `model.proxyNodes`). */
export const nodeVariant = <M extends object>(v: NodeVariants<M>, node: string): M => v.byNode.get(node) ?? v.empty;

/** Records for `copy` (built from `original`) the node variants of `original` (deriveVariants); the copy is frozen when it has any. */
export function copyNodeVariants<M extends object>(original: M, copy: M, derive: (variant: M) => M): M {
  const v = nodeVariantsOf(original);
  if (!v) return copy;
  const of = deriveVariants(original, copy, derive);
  variants.set(copy, {
    base: of(v.base),
    byNode: new Map([...v.byNode].map(([node, m]) => [node, of(m)])),
    empty: of(v.empty),
  });
  return Object.freeze(copy);
}

/** Which AuthorizationPolicies (or RequestAuthentications) apply to a sidecar workload (istiod's PolicyMatcherForProxy, selector part). */
import type { PolicyTargetReference } from '../../../model/authorization-policy.js';
import type { ObjectMeta } from '../../../model/k8s.js';

/** What selection reads of a policy. */
export interface SelectablePolicy {
  readonly meta: ObjectMeta;
  readonly spec: {
    readonly selector?: { readonly matchLabels?: Readonly<Record<string, string>> };
    readonly targetRef?: PolicyTargetReference;
    readonly targetRefs?: readonly PolicyTargetReference[];
  };
}

export interface Workload {
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
}

/**
 * Policies of the root namespace and of the workload's namespace whose `selector` matches its
 * labels (no selector: every workload). Policies with targetRef(s) attach to gateways and
 * waypoints, never to sidecars.
 */
export function policiesForWorkload<P extends SelectablePolicy>(
  policies: readonly P[],
  workload: Workload,
  rootNamespace: string,
): P[] {
  const applies = (p: P): boolean => {
    if (p.meta.namespace !== rootNamespace && p.meta.namespace !== workload.namespace) return false;
    if (p.spec.targetRef || p.spec.targetRefs?.length) return false;
    const labels = p.spec.selector?.matchLabels ?? {};
    return Object.entries(labels).every(([k, v]) => workload.labels[k] === v);
  };
  const root = policies.filter((p) => p.meta.namespace === rootNamespace && applies(p));
  const local =
    rootNamespace === workload.namespace
      ? []
      : policies.filter((p) => p.meta.namespace === workload.namespace && applies(p));
  return [...root, ...local];
}

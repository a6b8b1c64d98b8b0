/**
 * Istio security resource `AuthorizationPolicy` (security.istio.io v1/v1beta1), shaped as in the
 * Istio API reference. The inputs layer validates raw documents into these types.
 */
import type { ObjectMeta } from './k8s.js';
import type { Origin } from './diagnostics.js';

export type AuthorizationAction = 'ALLOW' | 'DENY' | 'AUDIT' | 'CUSTOM';

export interface AuthzSource {
  readonly principals?: readonly string[];
  readonly notPrincipals?: readonly string[];
  readonly requestPrincipals?: readonly string[];
  readonly notRequestPrincipals?: readonly string[];
  readonly namespaces?: readonly string[];
  readonly notNamespaces?: readonly string[];
  readonly serviceAccounts?: readonly string[];
  readonly notServiceAccounts?: readonly string[];
  readonly trustDomains?: readonly string[];
  readonly notTrustDomains?: readonly string[];
  readonly ipBlocks?: readonly string[];
  readonly notIpBlocks?: readonly string[];
  readonly remoteIpBlocks?: readonly string[];
  readonly notRemoteIpBlocks?: readonly string[];
}

export interface AuthzOperation {
  readonly hosts?: readonly string[];
  readonly notHosts?: readonly string[];
  readonly ports?: readonly string[];
  readonly notPorts?: readonly string[];
  readonly methods?: readonly string[];
  readonly notMethods?: readonly string[];
  readonly paths?: readonly string[];
  readonly notPaths?: readonly string[];
}

export interface AuthzCondition {
  readonly key: string;
  readonly values?: readonly string[];
  readonly notValues?: readonly string[];
}

export interface AuthzRule {
  readonly from?: readonly { readonly source?: AuthzSource }[];
  readonly to?: readonly { readonly operation?: AuthzOperation }[];
  readonly when?: readonly AuthzCondition[];
}

export interface PolicyTargetReference {
  readonly group?: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
}

export interface AuthorizationPolicySpec {
  readonly selector?: { readonly matchLabels?: Readonly<Record<string, string>> };
  readonly targetRef?: PolicyTargetReference;
  readonly targetRefs?: readonly PolicyTargetReference[];
  /** Absent means ALLOW. */
  readonly action?: AuthorizationAction;
  /** Only with CUSTOM: the mesh config extension provider that decides. */
  readonly provider?: { readonly name: string };
  /** A `null` entry is kept (istiod skips it with an error, it does not drop the policy). */
  readonly rules?: readonly (AuthzRule | null)[];
}

export interface AuthorizationPolicy {
  readonly kind: 'AuthorizationPolicy';
  readonly apiVersion: string;
  readonly meta: ObjectMeta;
  readonly origin: Origin;
  readonly spec: AuthorizationPolicySpec;
}

/** The annotation that turns a policy into shadow rules (evaluated and logged, never enforced). */
export const DRY_RUN_ANNOTATION = 'istio.io/dry-run';

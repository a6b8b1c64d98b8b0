/**
 * AuthorizationPolicies for proxyless gRPC servers (istiod: grpcgen/lds.go buildRBAC). gRPC
 * enforces only ALLOW and DENY RBAC (gRFC A41), as plain HTTP filters: DENY first
 * (`envoy.filters.http.rbac.DENY`), then ALLOW (`envoy.filters.http.rbac`), policy names
 * `<ns>-<name>-<rule>`.
 *
 * Where istiod would loosen, this stays closed: ALLOW policies always give the ALLOW filter, even
 * when none of their rules translate (istiod then drops the filter and allows everything); a
 * CUSTOM policy, which gRPC cannot send to an external authorizer, denies what it covers (as a
 * broken CUSTOM provider does on sidecars) instead of being ignored. AUDIT has no effect on gRPC.
 */
import { packAny } from '../../../xds/proto.js';
import type { AuthzFilter, WorkloadPolicies } from './builder.js';
import { isError, RBAC_ACTION, type Policy, type Rbac, type RbacAction } from './rbac-types.js';
import { generatePolicy, migrateTrustDomain, ruleModel } from './rule-model.js';
import type { TrustDomainBundle } from './trust-domain.js';
import type { AuthorizationPolicy } from '../../../model/authorization-policy.js';

export const GRPC_RBAC_FILTER = 'envoy.filters.http.rbac';
export const GRPC_RBAC_DENY_FILTER = 'envoy.filters.http.rbac.DENY';
const HTTP_RBAC_TYPE = 'envoy.extensions.filters.http.rbac.v3.RBAC';

function rules(policies: readonly AuthorizationPolicy[], action: RbacAction, bundle: TrustDomainBundle): Rbac {
  const out: Record<string, Policy> = {};
  for (const policy of policies) {
    (policy.spec.rules ?? []).forEach((rule, i) => {
      if (rule === null) return;
      const model = ruleModel(rule);
      if (isError(model)) return;
      const generated = generatePolicy(
        migrateTrustDomain(model, bundle),
        { forTCP: false, useAuthenticated: true, namespace: policy.meta.namespace },
        action,
      );
      if (!isError(generated)) out[`${policy.meta.namespace}-${policy.meta.name}-${i}`] = generated;
    });
  }
  const sorted = Object.fromEntries(
    Object.keys(out)
      .sort()
      .map((k) => [k, out[k] as Policy]),
  );
  return { action, policies: sorted };
}

export function buildGrpcServerRbacFilters(policies: WorkloadPolicies, bundle: TrustDomainBundle): AuthzFilter[] {
  const out: AuthzFilter[] = [];
  const deny = rules([...policies.custom, ...policies.deny], RBAC_ACTION.DENY, bundle);
  if (Object.keys(deny.policies ?? {}).length > 0)
    out.push({ name: GRPC_RBAC_DENY_FILTER, typed_config: packAny(HTTP_RBAC_TYPE, { rules: deny }) });
  if (policies.allow.length > 0)
    out.push({
      name: GRPC_RBAC_FILTER,
      typed_config: packAny(HTTP_RBAC_TYPE, { rules: rules(policies.allow, RBAC_ACTION.ALLOW, bundle) }),
    });
  return out;
}

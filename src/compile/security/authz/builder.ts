/**
 * AuthorizationPolicies of one workload → Envoy RBAC (and, for CUSTOM, ext_authz) filters, as
 * istiod's authz builder makes them. HTTP filters for HTTP filter chains, network filters for TCP
 * ones. Filters come in istiod's order: CUSTOM (RBAC shadow rules + ext_authz per provider), then
 * AUDIT, DENY, ALLOW. Pure: the mesh's services are reached only through `lookupService`.
 */
import type { AuthorizationPolicy } from '../../../model/authorization-policy.js';
import { DRY_RUN_ANNOTATION } from '../../../model/authorization-policy.js';
import type { ExtensionProvider } from '../../../model/extension-provider.js';
import { packAny, type Any } from '../../../xds/proto.js';
import {
  EXT_AUTHZ_MATCH_PREFIX,
  filterEnabledMetadata,
  resolveExtAuthzProviders,
  type BuiltExtAuthz,
  type ServiceLookup,
} from './ext-authz.js';
import { isError, RBAC_ACTION, type Policy, type Rbac, type RbacAction } from './rbac-types.js';
import { generatePolicy, migrateTrustDomain, ruleModel } from './rule-model.js';
import { trustDomainBundle, type TrustDomainBundle } from './trust-domain.js';

export const HTTP_RBAC_FILTER = 'envoy.filters.http.rbac';
export const HTTP_EXT_AUTHZ_FILTER = 'envoy.filters.http.ext_authz';
export const NETWORK_RBAC_FILTER = 'envoy.filters.network.rbac';
export const NETWORK_EXT_AUTHZ_FILTER = 'envoy.filters.network.ext_authz';

const TYPE = {
  httpRbac: 'envoy.extensions.filters.http.rbac.v3.RBAC',
  networkRbac: 'envoy.extensions.filters.network.rbac.v3.RBAC',
  httpExtAuthz: 'envoy.extensions.filters.http.ext_authz.v3.ExtAuthz',
  networkExtAuthz: 'envoy.extensions.filters.network.ext_authz.v3.ExtAuthz',
} as const;

const TCP_STAT_PREFIX = 'tcp.';
const EXT_AUTHZ_SHADOW_STAT_PREFIX = 'istio_ext_authz_';
const BAD_CUSTOM_SUFFIX = '-deny-due-to-bad-CUSTOM-action';

/** A filter as it goes into an HTTP connection manager or a filter chain: a name and a packed config. */
export interface AuthzFilter {
  readonly name: string;
  readonly typed_config: Any;
}

export interface AuthzOptions {
  readonly trustDomain?: TrustDomainBundle;
  readonly extensionProviders?: readonly ExtensionProvider[];
  readonly lookupService?: ServiceLookup;
  /** Match the peer principal from filter state rather than the TLS peer certificate. */
  readonly useFilterState?: boolean;
  /** Collects why rules or policies were skipped (istiod logs them). */
  readonly warn?: (message: string) => void;
}

/** The policies that apply to one workload, grouped by action (selection is the caller's job). */
export interface WorkloadPolicies {
  readonly custom: readonly AuthorizationPolicy[];
  readonly deny: readonly AuthorizationPolicy[];
  readonly audit: readonly AuthorizationPolicy[];
  readonly allow: readonly AuthorizationPolicy[];
}

export function groupByAction(policies: readonly AuthorizationPolicy[]): WorkloadPolicies {
  const of = (action: string) => policies.filter((p) => (p.spec.action ?? 'ALLOW') === action);
  return { custom: of('CUSTOM'), deny: of('DENY'), audit: of('AUDIT'), allow: of('ALLOW') };
}

/** A policy that never matches: what a policy without rules becomes. */
const MATCH_NEVER: Policy = { permissions: [{ not_rule: { any: true } }], principals: [{ not_id: { any: true } }] };

interface Built {
  readonly enforce?: Rbac;
  readonly shadow?: Rbac;
  /** CUSTOM only: per provider. */
  readonly byProvider: ReadonlyMap<string, { enforce: Rbac; shadow: Rbac }>;
}

function isDryRun(policy: AuthorizationPolicy, warn: (m: string) => void): boolean {
  const value = policy.meta.annotations[DRY_RUN_ANNOTATION];
  if (value === undefined) return false;
  // Go's strconv.ParseBool.
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)) return true;
  if (!['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value))
    warn(`failed to parse the value of ${DRY_RUN_ANNOTATION}: ${JSON.stringify(value)}`);
  return false;
}

function policyName(policy: AuthorizationPolicy, rule: number, provider: string | undefined): string {
  const prefix =
    provider === undefined
      ? ''
      : provider === ''
        ? `${EXT_AUTHZ_MATCH_PREFIX}-`
        : `${EXT_AUTHZ_MATCH_PREFIX}-${provider}-`;
  return `${prefix}ns[${policy.meta.namespace}]-policy[${policy.meta.name}]-rule[${rule}]`;
}

function buildRules(
  policies: readonly AuthorizationPolicy[],
  action: RbacAction,
  custom: boolean,
  forTCP: boolean,
  opts: AuthzOptions,
): Built | undefined {
  if (policies.length === 0) return undefined;
  const warn = opts.warn ?? (() => undefined);
  const bundle = opts.trustDomain ?? trustDomainBundle();
  const enforce: Rbac = { action, policies: {} };
  const shadow: Rbac = { action, policies: {} };
  const byProvider = new Map<string, { enforce: Rbac; shadow: Rbac }>();
  let hasEnforce = false;
  let hasShadow = false;
  for (const policy of policies) {
    const provider = custom ? (policy.spec.provider?.name ?? '') : undefined;
    const dryRun = isDryRun(policy, warn);
    let target: Rbac;
    if (provider !== undefined) {
      const sets = byProvider.get(provider) ?? { enforce: { action, policies: {} }, shadow: { action, policies: {} } };
      byProvider.set(provider, sets);
      target = dryRun ? sets.shadow : sets.enforce;
    } else target = dryRun ? shadow : enforce;
    if (dryRun) hasShadow = true;
    else hasEnforce = true;
    const policies = target.policies as Record<string, Policy>;
    const rules = policy.spec.rules ?? [];
    rules.forEach((rule, i) => {
      const name = policyName(policy, i, provider);
      if (rule === null) return warn(`skipped nil rule ${name}`);
      const model = ruleModel(rule);
      if (isError(model)) return warn(`skipped invalid rule ${name}: ${model.message}`);
      const generated = generatePolicy(
        migrateTrustDomain(model, bundle),
        { forTCP, useAuthenticated: !opts.useFilterState, namespace: policy.meta.namespace },
        action,
      );
      if (isError(generated))
        return warn(`skipped rule ${name} on ${forTCP ? 'TCP' : 'HTTP'} filter chain: ${generated.message}`);
      policies[name] = generated;
    });
    if (rules.length === 0) policies[policyName(policy, 0, provider)] = MATCH_NEVER;
  }
  return {
    enforce: hasEnforce ? sortPolicies(enforce) : undefined,
    shadow: hasShadow ? sortPolicies(shadow) : undefined,
    byProvider,
  };
}

/** Map keys are encoded in insertion order: sort them for a deterministic encoding. */
function sortPolicies(rbac: Rbac): Rbac {
  const policies = rbac.policies ?? {};
  return {
    action: rbac.action,
    policies: Object.fromEntries(
      Object.keys(policies)
        .sort()
        .map((k) => [k, policies[k] as Policy]),
    ),
  };
}

/** Without shadow rules istiod reads the action of a nil RBAC (ALLOW): the prefix is then the ALLOW one. */
function shadowStatPrefix(shadow: Rbac | undefined): string | undefined {
  const action = shadow ? shadow.action : RBAC_ACTION.ALLOW;
  if (action === RBAC_ACTION.ALLOW) return 'istio_dry_run_allow_';
  if (action === RBAC_ACTION.DENY) return 'istio_dry_run_deny_';
  return undefined;
}

const badCustomDenyRules = (rules: Rbac): Rbac =>
  sortPolicies({
    action: RBAC_ACTION.DENY,
    policies: Object.fromEntries(Object.entries(rules.policies ?? {}).map(([k, v]) => [k + BAD_CUSTOM_SUFFIX, v])),
  });

interface Flavor {
  readonly forTCP: boolean;
  readonly rbacName: string;
  readonly rbacType: string;
  readonly extAuthzName: string;
  readonly extAuthzType: string;
  readonly statPrefix?: string;
  readonly extAuthzOf: (built: BuiltExtAuthz, provider: string) => object | undefined;
}

const HTTP: Flavor = {
  forTCP: false,
  rbacName: HTTP_RBAC_FILTER,
  rbacType: TYPE.httpRbac,
  extAuthzName: HTTP_EXT_AUTHZ_FILTER,
  extAuthzType: TYPE.httpExtAuthz,
  extAuthzOf: (b, provider) =>
    b.http && { ...b.http, filter_enabled_metadata: filterEnabledMetadata(HTTP_RBAC_FILTER, provider) },
};

const TCP: Flavor = {
  forTCP: true,
  rbacName: NETWORK_RBAC_FILTER,
  rbacType: TYPE.networkRbac,
  extAuthzName: NETWORK_EXT_AUTHZ_FILTER,
  extAuthzType: TYPE.networkExtAuthz,
  statPrefix: TCP_STAT_PREFIX,
  extAuthzOf: (b, provider) =>
    b.tcp && { ...b.tcp, filter_enabled_metadata: filterEnabledMetadata(NETWORK_RBAC_FILTER, provider) },
};

const filter = (name: string, type: string, config: object): AuthzFilter => ({
  name,
  typed_config: packAny(type, config),
});

function rbacFilter(
  f: Flavor,
  config: { rules?: Rbac; shadow_rules?: Rbac; shadow_rules_stat_prefix?: string },
): AuthzFilter {
  return filter(f.rbacName, f.rbacType, f.statPrefix === undefined ? config : { ...config, stat_prefix: f.statPrefix });
}

function customFilters(built: Built, f: Flavor, opts: AuthzOptions): AuthzFilter[] {
  const warn = opts.warn ?? (() => undefined);
  const providers = [...built.byProvider.keys()].sort();
  const denyAll = (why: string) => {
    warn(why);
    return providers.map((p) =>
      rbacFilter(f, { rules: badCustomDenyRules(built.byProvider.get(p)?.enforce ?? { policies: {} }) }),
    );
  };
  if (providers.length > 1)
    return denyAll(
      `multiple CUSTOM authorization providers per workload are not supported, found ${providers.length}: ${providers.join(', ')}`,
    );
  const resolved = resolveExtAuthzProviders(opts.extensionProviders ?? [], opts.lookupService ?? (() => undefined));
  return providers.flatMap((provider) => {
    const sets = built.byProvider.get(provider) as { enforce: Rbac; shadow: Rbac };
    const ext = resolved.get(provider);
    if (!ext || ext.errors.length > 0) {
      warn(
        `failed to process CUSTOM action for provider ${provider}, will generate deny configs: ${ext ? ext.errors.join('; ') : 'no such extension provider'}`,
      );
      return [rbacFilter(f, { rules: badCustomDenyRules(sets.enforce) })];
    }
    const extAuthz = f.extAuthzOf(ext, provider);
    if (!extAuthz) return []; // an HTTP provider on a TCP filter chain: nothing to call
    const shadowRules = sortPolicies(sets.enforce);
    const rbac =
      Object.keys(sets.shadow.policies ?? {}).length > 0
        ? { rules: sortPolicies(sets.shadow), shadow_rules: shadowRules }
        : { shadow_rules: shadowRules };
    return [
      rbacFilter(f, { ...rbac, shadow_rules_stat_prefix: EXT_AUTHZ_SHADOW_STAT_PREFIX }),
      filter(f.extAuthzName, f.extAuthzType, extAuthz),
    ];
  });
}

function build(policies: WorkloadPolicies, f: Flavor, opts: AuthzOptions): AuthzFilter[] {
  const out: AuthzFilter[] = [];
  const custom = buildRules(policies.custom, RBAC_ACTION.DENY, true, f.forTCP, opts);
  if (custom) out.push(...customFilters(custom, f, opts));
  for (const [list, action] of [
    [policies.audit, RBAC_ACTION.LOG],
    [policies.deny, RBAC_ACTION.DENY],
    [policies.allow, RBAC_ACTION.ALLOW],
  ] as const) {
    const built = buildRules(list, action, false, f.forTCP, opts);
    if (built)
      out.push(
        rbacFilter(f, {
          rules: built.enforce,
          shadow_rules: built.shadow,
          shadow_rules_stat_prefix: shadowStatPrefix(built.shadow),
        }),
      );
  }
  return out;
}

/** HTTP filters (to go before the router) enforcing the workload's policies. */
export function buildHttpAuthzFilters(policies: WorkloadPolicies, opts: AuthzOptions = {}): AuthzFilter[] {
  return build(policies, HTTP, opts);
}

/** Network filters (to go before tcp_proxy) enforcing the workload's policies; HTTP-only fields are trimmed. */
export function buildTcpAuthzFilters(policies: WorkloadPolicies, opts: AuthzOptions = {}): AuthzFilter[] {
  return build(policies, TCP, opts);
}

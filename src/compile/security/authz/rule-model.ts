/**
 * One AuthorizationPolicy rule → one RBAC policy (istiod's model/model.go). `when` conditions are
 * the base of every permission/principal; each `to.operation` and `from.source` adds its fields in
 * front. Translation errors drop the whole rule for ALLOW; for DENY and AUDIT only the failing
 * value is dropped, so a rule using HTTP-only fields on TCP matches more, never less.
 */
import type { AuthzRule } from '../../../model/authorization-policy.js';
import * as g from './generators.js';
import {
  AuthzError,
  isError,
  permissionAnd,
  permissionAny,
  permissionNot,
  permissionOr,
  principalAnd,
  principalAny,
  principalNot,
  principalOr,
  RBAC_ACTION,
  type Permission,
  type Policy,
  type Principal,
  type RbacAction,
  type Result,
} from './rbac-types.js';
import type { TrustDomainBundle } from './trust-domain.js';

export const KEY = {
  sourcePrincipal: 'source.principal',
  sourceTrustDomain: 'source.trustDomain',
} as const;

interface Condition {
  readonly key: string;
  readonly values: readonly string[];
  readonly notValues: readonly string[];
  readonly gen: g.Generator;
}

type ConditionList = readonly Condition[];

export interface RuleModel {
  readonly permissions: readonly ConditionList[];
  readonly principals: readonly ConditionList[];
}

function condition(
  gen: g.Generator,
  key: string,
  values: readonly string[] = [],
  notValues: readonly string[] = [],
): Condition[] {
  return values.length === 0 && notValues.length === 0 ? [] : [{ key, values, notValues, gen }];
}

type Placement = 'permission' | 'principal';

function whenGenerator(key: string): [Placement, g.Generator] | undefined {
  const exact: Record<string, [Placement, g.Generator]> = {
    'destination.ip': ['permission', g.destinationIp],
    'destination.port': ['permission', g.destinationPort],
    'connection.sni': ['permission', g.connectionSni],
    'source.ip': ['principal', g.sourceIp],
    'remote.ip': ['principal', g.remoteIp],
    'source.namespace': ['principal', g.sourceNamespace],
    [KEY.sourceTrustDomain]: ['principal', g.sourceTrustDomain],
    'source.serviceAccount': ['principal', g.sourceServiceAccount],
    [KEY.sourcePrincipal]: ['principal', g.sourcePrincipal],
    'request.auth.principal': ['principal', g.requestPrincipal],
    'request.auth.audiences': ['principal', g.requestAudiences],
    'request.auth.presenter': ['principal', g.requestPresenter],
  };
  if (Object.prototype.hasOwnProperty.call(exact, key)) return exact[key];
  if (key.startsWith('experimental.envoy.filters.')) return ['permission', g.envoyFilter];
  if (key.startsWith('request.headers')) return ['principal', g.requestHeader];
  if (key.startsWith('request.auth.claims')) return ['principal', g.requestClaim];
  return undefined;
}

export function ruleModel(rule: AuthzRule): Result<RuleModel> {
  const basePermission: Condition[] = [];
  const basePrincipal: Condition[] = [];
  for (const when of rule.when ?? []) {
    const found = whenGenerator(when.key);
    if (!found) return new AuthzError(`unknown attribute ${when.key}`);
    const [placement, gen] = found;
    (placement === 'permission' ? basePermission : basePrincipal).push(
      ...condition(gen, when.key, when.values, when.notValues),
    );
  }
  const principals = (rule.from ?? []).map(({ source: s }): ConditionList =>
    s
      ? [
          ...condition(g.sourcePrincipal, KEY.sourcePrincipal, s.principals, s.notPrincipals),
          ...condition(g.requestPrincipal, 'request.auth.principal', s.requestPrincipals, s.notRequestPrincipals),
          ...condition(g.sourceServiceAccount, 'source.serviceAccount', s.serviceAccounts, s.notServiceAccounts),
          ...condition(g.sourceTrustDomain, KEY.sourceTrustDomain, s.trustDomains, s.notTrustDomains),
          ...condition(g.sourceNamespace, 'source.namespace', s.namespaces, s.notNamespaces),
          ...condition(g.remoteIp, 'remote.ip', s.remoteIpBlocks, s.notRemoteIpBlocks),
          ...condition(g.sourceIp, 'source.ip', s.ipBlocks, s.notIpBlocks),
          ...basePrincipal,
        ]
      : basePrincipal,
  );
  const permissions = (rule.to ?? []).map(({ operation: o }): ConditionList =>
    o
      ? [
          ...condition(g.host, ':authority', o.hosts, o.notHosts),
          ...condition(g.method, ':method', o.methods, o.notMethods),
          ...condition(g.path, 'path-matcher', o.paths, o.notPaths),
          ...condition(g.destinationPort, 'destination.port', o.ports, o.notPorts),
          ...basePermission,
        ]
      : basePermission,
  );
  return {
    permissions: permissions.length > 0 ? permissions : [basePermission],
    principals: principals.length > 0 ? principals : [basePrincipal],
  };
}

/** Source principals get the trust domain aliases; trust domains expand to the whole bundle. */
export function migrateTrustDomain(model: RuleModel, bundle: TrustDomainBundle): RuleModel {
  const migrate = (c: Condition): Condition => {
    if (c.key === KEY.sourcePrincipal)
      return { ...c, values: bundle.replaceAliases(c.values), notValues: bundle.replaceAliases(c.notValues) };
    if (c.key === KEY.sourceTrustDomain)
      return { ...c, values: bundle.expandAliases(c.values), notValues: bundle.expandAliases(c.notValues) };
    return c;
  };
  return { permissions: model.permissions, principals: model.principals.map((list) => list.map(migrate)) };
}

/** Translates the values of one condition into AND-ed RBAC items (values OR-ed; notValues OR-ed and negated). */
function translate<T>(
  c: Condition,
  strict: boolean,
  single: (gen: g.SingleGenerator, v: string) => Result<T>,
  extended: (gen: g.ExtendedGenerator, vs: readonly string[]) => Result<T | undefined>,
  or: (xs: T[]) => T,
  not: (x: T) => T,
): Result<T[]> {
  const out: T[] = [];
  for (const [values, negate] of [
    [c.values, false],
    [c.notValues, true],
  ] as const) {
    if (values.length === 0) continue;
    let item: T | undefined;
    if (c.gen.kind === 'extended') {
      const r = extended(c.gen, values);
      if (isError(r)) {
        if (strict) return r;
      } else item = r;
    } else {
      const parts: T[] = [];
      for (const v of values) {
        const r = single(c.gen, v);
        if (isError(r)) {
          if (strict) return r;
        } else parts.push(r);
      }
      if (parts.length > 0) item = or(parts);
    }
    if (item !== undefined) out.push(negate ? not(item) : item);
  }
  return out;
}

const unimplemented = new AuthzError('unimplemented');

function permissionOf(list: ConditionList, ctx: g.Context, strict: boolean): Result<Permission> {
  const and: Permission[] = [];
  for (const c of list) {
    const r = translate<Permission>(
      c,
      strict,
      (gen, v) => (gen.permission ? gen.permission(c.key, v, ctx) : unimplemented),
      (gen, vs) => (gen.permission ? gen.permission(c.key, vs, ctx) : unimplemented),
      permissionOr,
      permissionNot,
    );
    if (isError(r)) return r;
    and.push(...r);
  }
  return permissionAnd(and.length > 0 ? and : [permissionAny()]);
}

function principalOf(list: ConditionList, ctx: g.Context, strict: boolean): Result<Principal> {
  const and: Principal[] = [];
  for (const c of list) {
    const r = translate<Principal>(
      c,
      strict,
      (gen, v) => (gen.principal ? gen.principal(c.key, v, ctx) : unimplemented),
      (gen, vs) => (gen.principal ? gen.principal(c.key, vs, ctx) : unimplemented),
      principalOr,
      principalNot,
    );
    if (isError(r)) return r;
    and.push(...r);
  }
  return principalAnd(and.length > 0 ? and : [principalAny()]);
}

export function generatePolicy(model: RuleModel, ctx: g.Context, action: RbacAction): Result<Policy> {
  const strict = action === RBAC_ACTION.ALLOW;
  const permissions: Permission[] = [];
  for (const list of model.permissions) {
    const p = permissionOf(list, ctx, strict);
    if (isError(p)) return p;
    permissions.push(p);
  }
  const principals: Principal[] = [];
  for (const list of model.principals) {
    const p = principalOf(list, ctx, strict);
    if (isError(p)) return p;
    principals.push(p);
  }
  return { permissions, principals };
}

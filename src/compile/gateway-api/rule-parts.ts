/**
 * What the HTTPRoute and GRPCRoute conversions share: the result shape, failures that stop a
 * route's conversion, backends with their per-backend header filters, header operations and
 * value matches.
 */
import type { HeaderModifier, HTTPBackendRef, HTTPRouteFilter } from '../../model/gateway-api.js';
import type {
  HeaderOperations,
  HTTPRoute as IstioHttpRoute,
  HTTPRouteDestination,
  StringMatch,
} from '../../model/istio.js';
import { resolveBackend, type BackendContext } from './backends.js';
import { joinErrors, type ConfigError } from './status.js';

/** A problem and the field of the route it is about (`spec.rules[0].backendRefs[1]`). */
export interface Problem {
  readonly field: string;
  readonly error: ConfigError;
}

export interface RuleConversion {
  readonly routes: readonly IstioHttpRoute[];
  /** Each problem once, with its field, for diagnostics. */
  readonly problems: readonly Problem[];
  /** Reported on ResolvedRefs; the routes still apply. */
  readonly error?: ConfigError;
  /** The route cannot be converted at all for this kind of parent: no routes. */
  readonly fatal?: ConfigError;
}

export class Failure {
  constructor(
    readonly error: ConfigError,
    readonly field: string,
  ) {}
}

export const unsupportedFilter = (type: string, field: string): Failure =>
  new Failure({ reason: 'InvalidFilter', message: `unsupported filter type "${type}"` }, field);

export type Report = (field: string, error: ConfigError) => void;

/** One rule's routes (one per match) and the error its routes still apply with. */
export interface ConvertedRule {
  readonly routes: readonly IstioHttpRoute[];
  readonly error?: ConfigError;
}

/**
 * Converts every rule of a route, collecting each problem once by field; a `Failure` thrown by any
 * rule stops the route's conversion (no routes, the failure as `fatal`).
 */
export function convertRules<R>(
  rules: readonly R[],
  convert: (rule: R, n: number, report: Report) => ConvertedRule,
): RuleConversion {
  const routes: IstioHttpRoute[] = [];
  const problems: Problem[] = [];
  let error: ConfigError | undefined;
  const report: Report = (field, e) => {
    if (!problems.some((p) => p.field === field)) problems.push({ field, error: e });
  };
  try {
    rules.forEach((rule, n) => {
      const converted = convert(rule, n, report);
      routes.push(...converted.routes);
      error = joinErrors(error, converted.error);
    });
  } catch (e) {
    if (e instanceof Failure) return { routes: [], problems: [{ field: e.field, error: e.error }], fatal: e.error };
    throw e;
  }
  return { routes, problems, ...(error ? { error } : {}) };
}

/** Backends with weight > 0 that resolve; invalid ones are left out (a rule left with none answers 500). */
export function destinations(
  refs: readonly (HTTPBackendRef | (Omit<HTTPBackendRef, 'filters'> & { filters: readonly HTTPRouteFilter[] }))[],
  ctx: BackendContext,
  path: string,
  report: Report,
): { route: HTTPRouteDestination[]; error?: ConfigError } {
  let error: ConfigError | undefined;
  const kept: HTTPRouteDestination[] = [];
  for (const [j, ref] of refs.entries()) {
    if (ref.weight === 0) continue;
    const b = resolveBackend(ctx, ref);
    if ('fatal' in b) throw new Failure(b.fatal, `${path}[${j}]`);
    if ('invalid' in b) {
      error = joinErrors(error, b.invalid);
      report(`${path}[${j}]`, b.invalid);
      continue;
    }
    let headers: { request?: HeaderOperations; response?: HeaderOperations } | undefined;
    for (const [k, f] of ref.filters.entries()) {
      if (f.type === 'RequestHeaderModifier') headers = { ...headers, request: headerOps(f.requestHeaderModifier) };
      else if (f.type === 'ResponseHeaderModifier')
        headers = { ...headers, response: headerOps(f.responseHeaderModifier) };
      else throw unsupportedFilter(f.type, `${path}[${j}].filters[${k}]`);
    }
    kept.push({ destination: b.destination, weight: ref.weight, ...(headers ? { headers } : {}) });
  }
  // One destination takes everything: istiod writes it without a weight.
  const route = kept.length === 1 ? [withoutWeight(kept[0] as HTTPRouteDestination)] : kept;
  return { route, ...(error ? { error } : {}) };
}

export function withoutWeight(d: HTTPRouteDestination): HTTPRouteDestination {
  const { weight: _weight, ...rest } = d;
  return rest;
}

/** Header names lower-cased; a later entry for the same name is ignored, as the spec says. */
export function headerOps(m: HeaderModifier): HeaderOperations {
  const toMap = (list: HeaderModifier['set']): Record<string, string> | undefined => {
    if (!list.length) return undefined;
    const out: Record<string, string> = {};
    for (const h of list) {
      const k = h.name.toLowerCase();
      if (!Object.hasOwn(out, k)) out[k] = h.value;
    }
    return out;
  };
  const set = toMap(m.set);
  const add = toMap(m.add);
  return { ...(set ? { set } : {}), ...(add ? { add } : {}), ...(m.remove.length ? { remove: m.remove } : {}) };
}

export function stringMatch(type: 'Exact' | 'RegularExpression', value: string): StringMatch {
  return type === 'Exact' ? { exact: value } : { regex: value };
}

export function valueMap(list: readonly { type: 'Exact' | 'RegularExpression'; name: string; value: string }[]) {
  if (!list.length) return undefined;
  return Object.fromEntries(list.map((m) => [m.name, stringMatch(m.type, m.value)]));
}

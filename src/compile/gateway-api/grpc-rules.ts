/** GRPCRoute rules → VirtualService HTTP routes (istiod's convertGRPCRoute): one route per match. */
import type { GRPCRoute, GRPCRouteMatch } from '../../model/gateway-api.js';
import type {
  HeaderOperations,
  HTTPMatchRequest,
  HTTPRoute as IstioHttpRoute,
  StringMatch,
} from '../../model/istio.js';
import { resolveBackend, type BackendContext } from './backends.js';
import {
  destinations,
  Failure,
  headerOps,
  unsupportedFilter,
  valueMap,
  type Problem,
  type Report,
  type RuleConversion,
} from './rule-parts.js';
import { joinErrors, type ConfigError } from './status.js';

export function convertGrpcRules(route: GRPCRoute, ctx: BackendContext): RuleConversion {
  const out: IstioHttpRoute[] = [];
  const problems: Problem[] = [];
  let error: ConfigError | undefined;
  const report: Report = (field, e) => {
    if (!problems.some((p) => p.field === field)) problems.push({ field, error: e });
  };
  try {
    route.spec.rules.forEach((rule, n) => {
      const at = `spec.rules[${n}]`;
      let headers: { request?: HeaderOperations; response?: HeaderOperations } | undefined;
      const mirrors: NonNullable<IstioHttpRoute['mirrors']>[number][] = [];
      for (const [i, f] of rule.filters.entries()) {
        if (f.type === 'RequestHeaderModifier') headers = { ...headers, request: headerOps(f.requestHeaderModifier) };
        else if (f.type === 'ResponseHeaderModifier')
          headers = { ...headers, response: headerOps(f.responseHeaderModifier) };
        else if (f.type === 'RequestMirror') {
          const b = resolveBackend(ctx, f.requestMirror.backendRef);
          if ('destination' in b)
            mirrors.push({
              destination: b.destination,
              ...(f.requestMirror.percent !== undefined ? { percentage: { value: f.requestMirror.percent } } : {}),
            });
          else throw new Failure('fatal' in b ? b.fatal : b.invalid, `${at}.filters[${i}].requestMirror.backendRef`);
        } else throw unsupportedFilter(f.type, `${at}.filters[${i}]`);
      }
      const backends = destinations(rule.backendRefs, ctx, `${at}.backendRefs`, report);
      error = joinErrors(error, backends.error);
      for (const match of rule.matches.length ? rule.matches : [undefined]) {
        const m = match ? grpcMatch(match) : undefined;
        out.push({
          name: rule.name ?? `${route.meta.namespace}.${route.meta.name}.${n}`,
          ...(m ? { match: [m] } : {}),
          ...(headers ? { headers } : {}),
          ...(mirrors.length ? { mirrors } : {}),
          ...(backends.route.length ? { route: backends.route } : { directResponse: { status: 500 } }),
        });
      }
    });
  } catch (e) {
    if (e instanceof Failure) return { routes: [], problems: [{ field: e.field, error: e.error }], fatal: e.error };
    throw e;
  }
  return { routes: out, problems, ...(error ? { error } : {}) };
}

/** gRPC calls are `POST /<service>/<method>`: istiod's createGRPCURIMatch. */
function grpcMatch(m: GRPCRouteMatch): HTTPMatchRequest | undefined {
  let uri: StringMatch | undefined;
  const method = m.method;
  if (method) {
    const { service, method: name } = method;
    if (method.type === 'Exact') {
      if (name === undefined) uri = { prefix: `/${service}/` };
      else if (service === undefined) uri = { regex: `/[^/]+/${name}` };
      else uri = { exact: `/${service}/${name}` };
    } else if (name === undefined) uri = { regex: `/${service}/.+` };
    else if (service === undefined) uri = { regex: `/[^/]+/${name}` };
    else uri = { regex: `/${service}/${name}` };
  }
  const headers = valueMap(m.headers);
  if (!uri && !headers) return {};
  return { ...(uri ? { uri } : {}), ...(headers ? { headers } : {}) };
}

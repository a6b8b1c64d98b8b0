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
  convertRules,
  Failure,
  headerOps,
  unsupportedFilter,
  valueMap,
  type RuleConversion,
} from './rule-parts.js';

export function convertGrpcRules(route: GRPCRoute, ctx: BackendContext): RuleConversion {
  return convertRules(route.spec.rules, (rule, n, report) => {
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
    const routes = (rule.matches.length ? rule.matches : [undefined]).map((match): IstioHttpRoute => {
      const m = match ? grpcMatch(match) : undefined;
      return {
        name: rule.name ?? `${route.meta.namespace}.${route.meta.name}.${n}`,
        ...(m ? { match: [m] } : {}),
        ...(headers ? { headers } : {}),
        ...(mirrors.length ? { mirrors } : {}),
        ...(backends.route.length ? { route: backends.route } : { directResponse: { status: 500 } }),
      };
    });
    return { routes, ...(backends.error ? { error: backends.error } : {}) };
  });
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

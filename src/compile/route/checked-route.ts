/**
 * Checks a VirtualService HTTP route against the model once per compile and returns the usable
 * part: destinations and mirrors that name unknown hosts, ports or subsets are dropped (reported),
 * and a route left with nothing to do is dropped.
 */
import { type Diagnostics, objectAt } from '../../model/diagnostics.js';
import type { HTTPRoute, VirtualService } from '../../model/istio.js';
import type { CompileContext, SourcedHttpRoute } from '../context.js';
import { routeOrigin } from '../virtual-services.js';
import { checkDestination, reportDestination } from './destination.js';
import { grpcStatusCode } from './fault.js';
import { reportOnce } from './report-once.js';

export const REDIRECT_CODES = [301, 302, 303, 307, 308] as const;

const cache = new WeakMap<Diagnostics, WeakMap<HTTPRoute, HTTPRoute | null>>();

export function originOf(sourced: SourcedHttpRoute): { source: VirtualService; path: string } {
  const known = routeOrigin(sourced.route);
  if (known) return known;
  const i = sourced.source.spec.http?.indexOf(sourced.route) ?? -1;
  return { source: sourced.source, path: i >= 0 ? `spec.http[${i}]` : 'spec.http' };
}

export const objectRef = (source: VirtualService) => objectAt(source.kind, source);

export function checkedRoute(ctx: CompileContext, sourced: SourcedHttpRoute): HTTPRoute | undefined {
  let perDiags = cache.get(ctx.diags);
  if (!perDiags) cache.set(ctx.diags, (perDiags = new WeakMap()));
  const hit = perDiags.get(sourced.route);
  if (hit !== undefined) return hit ?? undefined;
  const result = check(ctx, sourced);
  perDiags.set(sourced.route, result ?? null);
  return result;
}

function check(ctx: CompileContext, sourced: SourcedHttpRoute): HTTPRoute | undefined {
  const { source, path } = originOf(sourced);
  const route = sourced.route;
  const ref = objectRef(source);

  if (route.redirect) {
    const code = route.redirect.redirectCode;
    if (code !== undefined && !(REDIRECT_CODES as readonly number[]).includes(code)) {
      reportOnce(ctx.diags, {
        severity: 'error',
        code: 'unsupported-redirect-code',
        ...ref,
        field: `${path}.redirect.redirectCode`,
        message: `redirect code ${code} is not supported (use ${REDIRECT_CODES.join(', ')}); the route is dropped`,
      });
      return undefined;
    }
    return route;
  }
  if (route.directResponse) return route;

  const kept = (route.route ?? []).filter((d, j) => {
    const problem = checkDestination(ctx, d.destination);
    if (problem) reportDestination(ctx.diags, source, `${path}.route[${j}]`, problem);
    return !problem;
  });
  if (!kept.length) {
    if (route.route?.length) return undefined; // every destination was bad: already reported
    reportOnce(ctx.diags, {
      severity: 'error',
      code: 'missing-destination',
      ...ref,
      field: path,
      message: 'the route has no destination, redirect or directResponse; it is dropped',
    });
    return undefined;
  }
  const mirrors = (route.mirrors ?? []).filter((m, j) => {
    const problem = checkDestination(ctx, m.destination);
    if (problem) reportDestination(ctx.diags, source, `${path}.mirrors[${j}]`, problem);
    return !problem;
  });
  let fault = route.fault;
  const grpc = fault?.abort?.grpcStatus;
  if (fault && grpc !== undefined && grpcStatusCode(grpc) === undefined && !/^\d+$/.test(grpc)) {
    reportOnce(ctx.diags, {
      severity: 'error',
      code: 'invalid-field',
      ...ref,
      field: `${path}.fault.abort.grpcStatus`,
      message: `unknown gRPC status ${grpc}; the abort is dropped`,
    });
    fault = fault.delay ? { delay: fault.delay } : undefined;
  }
  const out: HTTPRoute = { ...route, route: kept, mirrors };
  if (fault) return { ...out, fault };
  const { fault: _dropped, ...rest } = out;
  return rest;
}

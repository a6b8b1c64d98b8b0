/**
 * TCPRoute and TLSRoute rules → VirtualService tcp/tls route destinations (istiod's
 * convertTCPRoute / convertTLSRoute): weighted backends, invalid ones left out. A rule left without
 * a backend is left out (istiod sends it to a cluster that does not exist; meshsnap never emits
 * one), reported like an invalid backend.
 */
import type { L4RouteRule, TCPRoute, TLSRoute } from '../../model/gateway-api.js';
import type { RouteDestination } from '../../model/istio.js';
import { resolveBackend, type BackendContext } from './backends.js';
import type { Problem } from './rule-parts.js';
import { joinErrors, type ConfigError } from './status.js';

export interface L4Conversion {
  /** One destination list per rule that has a usable backend. */
  readonly rules: readonly (readonly RouteDestination[])[];
  readonly problems: readonly Problem[];
  readonly error?: ConfigError;
  readonly fatal?: ConfigError;
}

export function convertL4Rules(route: TCPRoute | TLSRoute, ctx: BackendContext): L4Conversion {
  const rules: RouteDestination[][] = [];
  const problems: Problem[] = [];
  let error: ConfigError | undefined;
  for (const [n, rule] of route.spec.rules.entries()) {
    const r = l4Rule(rule, ctx, `spec.rules[${n}].backendRefs`, problems);
    if ('fatal' in r) return { rules: [], problems, fatal: r.fatal };
    error = joinErrors(error, r.error);
    if (r.destinations.length) rules.push(r.destinations);
    else if (!r.error) {
      const none = { reason: 'BackendNotFound', message: 'no backend with a weight above 0' };
      error = joinErrors(error, none);
      problems.push({ field: `spec.rules[${n}].backendRefs`, error: none });
    }
  }
  return { rules, problems, ...(error ? { error } : {}) };
}

function l4Rule(
  rule: L4RouteRule,
  ctx: BackendContext,
  path: string,
  problems: Problem[],
): { destinations: RouteDestination[]; error?: ConfigError } | { fatal: ConfigError } {
  let error: ConfigError | undefined;
  const kept: RouteDestination[] = [];
  for (const [j, ref] of rule.backendRefs.entries()) {
    if (ref.weight === 0) continue;
    const b = resolveBackend(ctx, ref);
    if ('fatal' in b) {
      problems.push({ field: `${path}[${j}]`, error: b.fatal });
      return { fatal: b.fatal };
    }
    if ('invalid' in b) {
      error = joinErrors(error, b.invalid);
      problems.push({ field: `${path}[${j}]`, error: b.invalid });
      continue;
    }
    kept.push({ destination: b.destination, weight: ref.weight });
  }
  const destinations = kept.length === 1 ? [{ destination: (kept[0] as RouteDestination).destination }] : kept;
  return { destinations, ...(error ? { error } : {}) };
}

/**
 * HTTP filters configured per route: `typed_per_filter_config` of the virtual host, overridden by
 * the matched route's (Envoy's most specific wins). Istio puts VirtualService fault injection
 * there (`envoy.filters.http.fault`), so a request can be routed and still aborted or delayed. Pure.
 */
import { num, obj, str, type JsonObject } from './json.js';
import type { HttpFilterAnswer } from './types.js';

const SCALE: Readonly<Record<string, number>> = { HUNDRED: 1, TEN_THOUSAND: 100, MILLION: 10000 };

/** A FractionalPercent as a percentage (100 when absent, as Envoy's fault filter takes it). */
function percent(p: unknown): number {
  const fraction = obj(p);
  if (!fraction) return 100;
  return (num(fraction.numerator) ?? 0) / (SCALE[str(fraction.denominator) ?? 'HUNDRED'] ?? 1);
}

/** `aborts 100% with HTTP 500; delays 10% by 5s`, or undefined when the fault does nothing explain can say. */
export function describeFault(config: JsonObject): string | undefined {
  const parts: string[] = [];
  const abort = obj(config.abort);
  if (abort) {
    const status = num(abort.http_status);
    const grpc = num(abort.grpc_status);
    const what = status !== undefined ? `HTTP ${status}` : grpc !== undefined ? `gRPC status ${grpc}` : 'an error';
    parts.push(`aborts ${percent(abort.percentage)}% with ${what}`);
  }
  const delay = obj(config.delay);
  if (delay) parts.push(`delays ${percent(delay.percentage)}% by ${str(delay.fixed_delay) ?? 'a header-given time'}`);
  return parts.length ? parts.join('; ') : undefined;
}

export function perFilterConfigs(virtualHost: JsonObject, route: JsonObject): Map<string, JsonObject> {
  const out = new Map<string, JsonObject>();
  for (const source of [virtualHost, route])
    for (const [name, config] of Object.entries(obj(source.typed_per_filter_config) ?? {})) {
      const c = obj(config);
      if (c) out.set(name, c);
    }
  return out;
}

/** The HTTP filters, each with what the route configures for it. */
export function withPerRouteConfig(
  filters: readonly HttpFilterAnswer[],
  configs: ReadonlyMap<string, JsonObject>,
): HttpFilterAnswer[] {
  return filters.map((f) => {
    const config = configs.get(f.name);
    if (!config) return f;
    const fault = f.name === 'envoy.filters.http.fault' ? describeFault(config) : undefined;
    return {
      ...f,
      perRoute: fault ?? `configured for this route (${str(config['@type'])?.split('.').pop() ?? 'config'})`,
    };
  });
}

/**
 * The terminal network filter of a filter chain: an HTTP connection manager (its HTTP filters and
 * route config, RDS or inline) or a TCP proxy (its cluster or weighted clusters). Pure.
 */
import { num, obj, objects, str, strings, type JsonObject } from './json.js';
import type { HttpFilterAnswer } from './types.js';

const HCM = 'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
const TCP_PROXY = 'envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy';

const typeOf = (config: JsonObject | undefined): string => {
  const t = str(config?.['@type']) ?? '';
  return t.slice(t.lastIndexOf('/') + 1);
};

export type NetworkFilter =
  | { readonly kind: 'http'; readonly hcm: JsonObject }
  | { readonly kind: 'tcp'; readonly tcpProxy: JsonObject }
  | { readonly kind: 'other'; readonly names: string[] };

export function terminalFilter(chain: JsonObject): NetworkFilter {
  const filters = objects(chain.filters);
  for (const f of filters) {
    const config = obj(f.typed_config);
    const type = typeOf(config);
    if (type === HCM || f.name === 'envoy.filters.network.http_connection_manager')
      return { kind: 'http', hcm: config ?? {} };
    if (type === TCP_PROXY || f.name === 'envoy.filters.network.tcp_proxy')
      return { kind: 'tcp', tcpProxy: config ?? {} };
  }
  return { kind: 'other', names: filters.map((f) => str(f.name) ?? '') };
}

/** A route's or a TCP proxy's upstream: cluster names and their weights in percent. */
export interface WeightedTarget {
  readonly name: string;
  readonly weight: number;
}

export function weightedTargets(single: unknown, weighted: unknown): WeightedTarget[] {
  const name = str(single);
  if (name !== undefined) return [{ name, weight: 100 }];
  const clusters = objects(obj(weighted)?.clusters);
  const weights = clusters.map((c) => num(c.weight) ?? 0);
  const total = num(obj(weighted)?.total_weight) ?? weights.reduce((a, b) => a + b, 0);
  return clusters.map((c, i) => ({
    name: str(c.name) ?? '',
    weight: total > 0 ? Math.round(((weights[i] as number) / total) * 10000) / 100 : 0,
  }));
}

export function tcpProxyTargets(tcpProxy: JsonObject): WeightedTarget[] {
  return weightedTargets(tcpProxy.cluster, tcpProxy.weighted_clusters);
}

/** What an HTTP filter is, and what it enforces when explain can tell (RBAC policies, JWT providers). */
function filterDetail(type: string, config: JsonObject | undefined): string | undefined {
  if (type.endsWith('.rbac.v3.RBAC')) {
    const parts: string[] = [];
    for (const [key, label] of [
      ['rules', 'enforced'],
      ['shadow_rules', 'shadow'],
    ] as const) {
      const rules = obj(config?.[key]);
      if (!rules) continue;
      const policies = Object.keys(obj(rules.policies) ?? {}).sort();
      parts.push(`${label} ${str(rules.action) ?? 'ALLOW'}: ${policies.length ? policies.join(', ') : 'no policies'}`);
    }
    return parts.length ? `${parts.join('; ')} (not evaluated by explain)` : 'no rules';
  }
  if (type.endsWith('.jwt_authn.v3.JwtAuthentication')) {
    const providers = Object.keys(obj(config?.providers) ?? {}).sort();
    return `providers: ${providers.join(', ') || 'none'} (not evaluated by explain)`;
  }
  if (type.endsWith('.ext_authz.v3.ExtAuthz')) return 'external authorization (not evaluated by explain)';
  return undefined;
}

export function httpFilters(hcm: JsonObject): HttpFilterAnswer[] {
  return objects(hcm.http_filters).map((f) => {
    const config = obj(f.typed_config);
    const type = typeOf(config);
    const detail = filterDetail(type, config);
    return {
      name: str(f.name) ?? '',
      ...(type !== '' ? { type } : {}),
      ...(detail !== undefined ? { detail } : {}),
    };
  });
}

/** The HCM's route config: `rds.route_config_name`, or the inline `route_config`. */
export function routeConfigOf(
  hcm: JsonObject,
): { source: 'rds'; name: string } | { source: 'inline'; name: string; config: JsonObject } | undefined {
  const rds = obj(hcm.rds);
  const rdsName = str(rds?.route_config_name);
  if (rdsName !== undefined) return { source: 'rds', name: rdsName };
  const inline = obj(hcm.route_config);
  if (inline) return { source: 'inline', name: str(inline.name) ?? '', config: inline };
  return undefined;
}

/** Whether the HCM strips the port from the Host header before routing. */
export const hcmStripsPort = (hcm: JsonObject): boolean =>
  hcm.strip_any_host_port === true || strings(hcm.strip_port_mode).length > 0;

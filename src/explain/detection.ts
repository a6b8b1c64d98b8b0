/**
 * What a listener's listener filters learn about a connection before its filter chain is chosen:
 * `tls_inspector` sets the transport protocol `tls`, the SNI and the ALPN; `http_inspector` sets
 * `http/1.1` or `h2c` as the application protocol of plaintext HTTP. Without them Envoy sees
 * `raw_buffer` and no protocols. A filter is skipped when its `filter_disabled` predicate holds for
 * the connection (destination port ranges, and/or/not). Pure.
 */
import { num, obj, objects, str, type JsonObject } from './json.js';
import type { ConnectionView } from './filter-chain-match.js';
import type { ExplainRequest } from './types.js';

/** Envoy's ListenerFilterChainMatchPredicate, for what explain knows of a connection (its destination port). */
export function predicateHolds(p: JsonObject, port: number): boolean {
  if (p.any_match === true) return true;
  const range = obj(p.destination_port_range);
  if (range) return port >= (num(range.start) ?? 0) && port < (num(range.end) ?? 0);
  const or = obj(p.or_match);
  if (or) return objects(or.rules).some((r) => predicateHolds(r, port));
  const and = obj(p.and_match);
  if (and) return objects(and.rules).every((r) => predicateHolds(r, port));
  const not = obj(p.not_match);
  if (not) return !predicateHolds(not, port);
  return false;
}

function activeFilters(listener: JsonObject, port: number): Set<string> {
  const active = new Set<string>();
  for (const f of objects(listener.listener_filters)) {
    const disabled = obj(f.filter_disabled);
    if (disabled && predicateHolds(disabled, port)) continue;
    const type = str(obj(f.typed_config)?.['@type']) ?? '';
    active.add(type.slice(type.lastIndexOf('.') + 1) || (str(f.name) ?? ''));
  }
  return active;
}

const hasFilter = (active: Set<string>, type: string, name: string) => active.has(type) || active.has(name);

export function detectConnection(
  listener: JsonObject,
  req: ExplainRequest,
  destinationIp: string | undefined,
): { view: ConnectionView; notes: string[] } {
  const active = activeFilters(listener, req.port);
  const tlsInspector = hasFilter(active, 'TlsInspector', 'envoy.filters.listener.tls_inspector');
  const httpInspector = hasFilter(active, 'HttpInspector', 'envoy.filters.listener.http_inspector');
  const notes: string[] = [];
  const base = {
    destinationPort: req.port,
    ...(destinationIp !== undefined ? { destinationIp } : {}),
    ...(req.sourceIp !== undefined ? { sourceIp: req.sourceIp } : {}),
    ...(req.sourcePort !== undefined ? { sourcePort: req.sourcePort } : {}),
  };
  if (req.tls) {
    if (!tlsInspector) {
      notes.push(`listener ${str(listener.name) ?? ''} has no active tls_inspector: TLS is not detected (raw_buffer)`);
      return { view: { ...base, transportProtocol: 'raw_buffer', applicationProtocols: [] }, notes };
    }
    const sni = req.sni ?? req.host;
    return {
      view: {
        ...base,
        transportProtocol: 'tls',
        applicationProtocols: req.alpn ?? [],
        ...(sni !== '' ? { serverName: sni } : {}),
      },
      notes,
    };
  }
  const http = req.protocol !== 'tcp' && req.protocol !== 'h2';
  const alpn = http && httpInspector ? [req.protocol === 'h2c' ? 'h2c' : 'http/1.1'] : [];
  return { view: { ...base, transportProtocol: 'raw_buffer', applicationProtocols: alpn }, notes };
}

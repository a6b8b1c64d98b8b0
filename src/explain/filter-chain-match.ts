/**
 * Envoy's filter chain selection (Listener.filter_chains[].filter_chain_match), from Envoy's docs:
 * the chains are narrowed in this order, and at each step only the chains that match the
 * connection **most specifically** go on (a chain without that criterion matches anything, least
 * specifically; a chain whose criterion does not match is dropped):
 *   1. destination_port, 2. prefix_ranges (destination IP, longest prefix), 3. server_names (SNI:
 *   exact, then the longest `*.suffix`), 4. transport_protocol, 5. application_protocols (ALPN),
 *   6. direct_source_prefix_ranges, 7. source_type, 8. source_prefix_ranges, 9. source_ports.
 * Envoy does not go back: when a step leaves nothing, no chain matches, and the listener's
 * `default_filter_chain` (if any) takes the connection. Pure.
 */
import { cidrMatchLength, isLoopback, parseIp, type ParsedIp } from './ip.js';
import { num, obj, objects, str, strings, type JsonObject } from './json.js';

export interface ConnectionView {
  readonly destinationPort: number;
  readonly destinationIp?: string;
  /** SNI, when TLS was detected by a tls_inspector. */
  readonly serverName?: string;
  /** `tls` or `raw_buffer` (Envoy's default when no listener filter detects a protocol). */
  readonly transportProtocol: string;
  /** ALPN (TLS) or what http_inspector detected (`http/1.1`, `h2c`). */
  readonly applicationProtocols: readonly string[];
  readonly sourceIp?: string;
  readonly sourcePort?: number;
}

/** How specifically a chain matches at one step: undefined = does not match; 0 = has no such criterion. */
type Specificity = number | undefined;

interface Step {
  readonly name: string;
  readonly has: (m: JsonObject) => boolean;
  readonly score: (m: JsonObject, c: ConnectionView) => Specificity;
  readonly value: (c: ConnectionView) => string;
}

function ipScore(ranges: JsonObject[], ip: ParsedIp | undefined): Specificity {
  if (ranges.length === 0) return 0;
  if (!ip) return undefined;
  let best: number | undefined;
  for (const r of ranges) {
    const len = cidrMatchLength(r, ip);
    if (len !== undefined && (best === undefined || len > best)) best = len;
  }
  return best === undefined ? undefined : best + 1;
}

/** `www.example.com` → exact beats every wildcard; `*.example.com` beats `*.com`. */
function serverNameScore(names: string[], sni: string | undefined): Specificity {
  if (names.length === 0) return 0;
  if (sni === undefined) return undefined;
  const host = sni.toLowerCase();
  let best: number | undefined;
  for (const raw of names) {
    const name = raw.toLowerCase();
    let score: number | undefined;
    if (name === host) score = 100000;
    else if (name.startsWith('*.') && host.endsWith(name.slice(1)) && host.length > name.length - 1)
      score = name.length;
    if (score !== undefined && (best === undefined || score > best)) best = score;
  }
  return best;
}

const rangesOf = (m: JsonObject, key: string) => objects(m[key]);
const parsed = (ip: string | undefined) => (ip === undefined ? undefined : parseIp(ip));

function sourceTypeScore(m: JsonObject, c: ConnectionView): Specificity {
  const type = str(m.source_type) ?? 'ANY';
  if (type === 'ANY') return 0;
  const src = parsed(c.sourceIp);
  if (!src) return undefined;
  const local = isLoopback(src) || c.sourceIp === c.destinationIp;
  return (type === 'SAME_IP_OR_LOOPBACK') === local ? 1 : undefined;
}

export const FILTER_CHAIN_STEPS: readonly Step[] = [
  {
    name: 'destination_port',
    has: (m) => m.destination_port !== undefined,
    score: (m, c) =>
      m.destination_port === undefined ? 0 : num(m.destination_port) === c.destinationPort ? 1 : undefined,
    value: (c) => String(c.destinationPort),
  },
  {
    name: 'prefix_ranges',
    has: (m) => rangesOf(m, 'prefix_ranges').length > 0,
    score: (m, c) => ipScore(rangesOf(m, 'prefix_ranges'), parsed(c.destinationIp)),
    value: (c) => c.destinationIp ?? 'unknown',
  },
  {
    name: 'server_names',
    has: (m) => strings(m.server_names).length > 0,
    score: (m, c) => serverNameScore(strings(m.server_names), c.serverName),
    value: (c) => c.serverName ?? 'none',
  },
  {
    name: 'transport_protocol',
    has: (m) => (str(m.transport_protocol) ?? '') !== '',
    score: (m, c) => {
      const t = str(m.transport_protocol) ?? '';
      return t === '' ? 0 : t === c.transportProtocol ? 1 : undefined;
    },
    value: (c) => c.transportProtocol,
  },
  {
    name: 'application_protocols',
    has: (m) => strings(m.application_protocols).length > 0,
    score: (m, c) => {
      const want = strings(m.application_protocols);
      if (want.length === 0) return 0;
      return want.some((p) => c.applicationProtocols.includes(p)) ? 1 : undefined;
    },
    value: (c) => (c.applicationProtocols.length ? c.applicationProtocols.join(',') : 'none'),
  },
  {
    name: 'direct_source_prefix_ranges',
    has: (m) => rangesOf(m, 'direct_source_prefix_ranges').length > 0,
    score: (m, c) => ipScore(rangesOf(m, 'direct_source_prefix_ranges'), parsed(c.sourceIp)),
    value: (c) => c.sourceIp ?? 'unknown',
  },
  {
    name: 'source_type',
    has: (m) => (str(m.source_type) ?? 'ANY') !== 'ANY',
    score: sourceTypeScore,
    value: (c) => c.sourceIp ?? 'unknown',
  },
  {
    name: 'source_prefix_ranges',
    has: (m) => rangesOf(m, 'source_prefix_ranges').length > 0,
    score: (m, c) => ipScore(rangesOf(m, 'source_prefix_ranges'), parsed(c.sourceIp)),
    value: (c) => c.sourceIp ?? 'unknown',
  },
  {
    name: 'source_ports',
    has: (m) => Array.isArray(m.source_ports) && m.source_ports.length > 0,
    score: (m, c) => {
      const ports = Array.isArray(m.source_ports) ? m.source_ports.map(num) : [];
      if (ports.length === 0) return 0;
      return c.sourcePort !== undefined && ports.includes(c.sourcePort) ? 1 : undefined;
    },
    value: (c) => (c.sourcePort === undefined ? 'unknown' : String(c.sourcePort)),
  },
];

export interface FilterChainChoice {
  /** Index into filter_chains, or undefined when none matched. */
  readonly index?: number;
  readonly chain?: JsonObject;
  /** One line per step that narrowed the candidates. */
  readonly why: string[];
}

export const matchOf = (chain: JsonObject): JsonObject => obj(chain.filter_chain_match) ?? {};

export function matchFilterChain(chains: readonly JsonObject[], c: ConnectionView): FilterChainChoice {
  let candidates = chains.map((chain, index) => ({ chain, index }));
  const why: string[] = [];
  for (const step of FILTER_CHAIN_STEPS) {
    if (candidates.length === 0) break;
    if (!candidates.some(({ chain }) => step.has(matchOf(chain)))) continue;
    const scored = candidates.map((x) => ({ ...x, score: step.score(matchOf(x.chain), c) }));
    const matching = scored.filter((x) => x.score !== undefined);
    const top = Math.max(...matching.map((x) => x.score as number));
    const next = matching.filter((x) => x.score === top);
    why.push(
      next.length === 0
        ? `${step.name}: no chain matches ${step.value(c)}`
        : `${step.name} ${step.value(c)}: ${next.length} of ${candidates.length} chains match ${top === 0 ? '(those without this criterion)' : 'most specifically'}`,
    );
    candidates = next;
  }
  if (candidates.length === 0) return { why };
  const first = candidates[0] as { chain: JsonObject; index: number };
  if (candidates.length > 1)
    why.push(`${candidates.length} chains are equally specific; Envoy refuses such a listener, the first is shown`);
  return { index: first.index, chain: first.chain, why };
}

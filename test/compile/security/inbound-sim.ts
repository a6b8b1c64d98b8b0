/**
 * A connection arriving at `virtualInbound`, followed through Envoy's filter chain match the way
 * istiod's pilot/pkg/simulation does it (ported in our own words): which chain takes it, and which
 * cluster it ends up in, or why it fails. Works on the proto3 JSON a node is served.
 */
type Json = Record<string, unknown>;

export type CallTls = 'plaintext' | 'mtls' | 'tls';

export interface InboundCall {
  readonly port: number;
  readonly protocol: 'http' | 'http2' | 'tcp';
  readonly tls: CallTls;
}

export type CallResult =
  | { readonly cluster: string; readonly chain: string; readonly http?: Json }
  | { readonly error: 'no filter chain' | 'protocol error' | 'tls error' | 'mtls error' | 'several filter chains' };

const arr = (v: unknown): Json[] => (Array.isArray(v) ? (v as Json[]) : []);
const strs = (v: unknown): string[] => (Array.isArray(v) ? (v as string[]) : []);

/** Whether a ListenerFilterChainMatchPredicate (filter_disabled) matches a destination port. */
function predicate(p: Json | undefined, port: number): boolean {
  if (!p) return false;
  const range = p.destination_port_range as { start?: number; end?: number } | undefined;
  if (range) return port >= (range.start ?? 0) && port < (range.end ?? 0);
  if (p.or_match) return arr((p.or_match as Json).rules).some((r) => predicate(r, port));
  if (p.and_match) return arr((p.and_match as Json).rules).every((r) => predicate(r, port));
  if (p.not_match) return !predicate(p.not_match as Json, port);
  return p.any_match === true;
}

function hasListenerFilter(listener: Json, name: string, port: number): boolean {
  return arr(listener.listener_filters).some(
    (f) => f.name === name && !predicate(f.filter_disabled as Json | undefined, port),
  );
}

/** Envoy's sieve, one criterion at a time: the best matching value wins, else chains without the field. */
function sieve(chains: Json[], field: (m: Json) => unknown, rank: (value: unknown) => number): Json[] {
  const isSet = (v: unknown) => v !== undefined && v !== '' && !(Array.isArray(v) && v.length === 0);
  const matchOf = (c: Json) => (c.filter_chain_match ?? {}) as Json;
  if (!chains.some((c) => isSet(field(matchOf(c))))) return chains;
  let best = 0;
  for (const c of chains) if (isSet(field(matchOf(c)))) best = Math.max(best, rank(field(matchOf(c))));
  if (best > 0) return chains.filter((c) => isSet(field(matchOf(c))) && rank(field(matchOf(c))) === best);
  return chains.filter((c) => !isSet(field(matchOf(c))));
}

const MTLS_ALPN = { http: 'istio-http/1.1', http2: 'istio-h2', tcp: 'istio' } as const;
const TLS_ALPN = { http: 'http/1.1', http2: 'h2', tcp: '' } as const;
const PLAIN_ALPN = { http: 'http/1.1', http2: 'h2c', tcp: '' } as const;

export function simulateInbound(listener: Json, call: InboundCall): CallResult {
  const tlsInspector = hasListenerFilter(listener, 'envoy.filters.listener.tls_inspector', call.port);
  let alpn: string = call.tls === 'mtls' ? MTLS_ALPN[call.protocol] : call.tls === 'tls' ? TLS_ALPN[call.protocol] : '';
  if (!tlsInspector) alpn = ''; // nobody reads the ClientHello
  if (call.tls === 'plaintext' && hasListenerFilter(listener, 'envoy.filters.listener.http_inspector', call.port))
    alpn = PLAIN_ALPN[call.protocol];

  let chains = arr(listener.filter_chains);
  chains = sieve(
    chains,
    (m) => m.destination_port,
    (v) => (v === call.port ? 1 : 0),
  );
  chains = sieve(
    chains,
    (m) => m.transport_protocol,
    (v) => {
      if (!tlsInspector) return v === 'raw_buffer' ? 1 : 0;
      if (v === 'tls') return call.tls === 'plaintext' ? 0 : 1;
      return v === 'raw_buffer' && call.tls === 'plaintext' ? 1 : 0;
    },
  );
  chains = sieve(
    chains,
    (m) => m.application_protocols,
    (v) => (strs(v).includes(alpn) ? 1 : 0),
  );
  if (chains.length > 1) return { error: 'several filter chains' };
  const chain = chains[0];
  if (!chain) return { error: 'no filter chain' };
  const terminatesTls = chain.transport_socket !== undefined;
  if (terminatesTls && call.tls === 'plaintext') return { error: 'tls error' };
  // Istio mTLS chains require a client certificate: one-way TLS fails the handshake.
  if (terminatesTls && call.tls === 'tls') return { error: 'mtls error' };
  const name = String(chain.name);
  const filters = arr(chain.filters);
  const hcm = filters.find((f) => f.name === 'envoy.filters.network.http_connection_manager');
  if (hcm) {
    if (call.tls !== 'plaintext' && !terminatesTls) return { error: 'protocol error' };
    if (call.protocol === 'tcp') return { error: 'protocol error' };
    const config = hcm.typed_config as Json;
    const route = arr(arr((config.route_config as Json).virtual_hosts)[0]?.routes)[0]?.route as Json;
    return { cluster: String(route.cluster), chain: name, http: config };
  }
  const tcp = filters.find((f) => f.name === 'envoy.filters.network.tcp_proxy');
  return { cluster: String((tcp?.typed_config as Json).cluster), chain: name };
}

/**
 * The question `explain` answers, as the CLI flags and the API query give it: which proxy (a node
 * id and metadata, or a pod of the stored inputs) and which request. One parser for both, so they
 * accept and refuse the same (a refusal is a `bad_request`: exit 2 in the CLI, 400 in the API). Pure.
 */
import { badRequest } from '../errors.js';
import type { ExplainRequest, RequestProtocol } from '../explain/index.js';

export interface ExplainQueryFields {
  readonly node?: string;
  readonly metadata?: Record<string, unknown>;
  readonly pod?: string;
  readonly to?: string;
  readonly path?: string;
  readonly method?: string;
  readonly headers?: readonly string[];
  readonly tls?: boolean;
  readonly sni?: string;
  readonly inbound?: boolean;
  readonly protocol?: string;
}

export type ProxyRef =
  | { readonly kind: 'node'; readonly id: string; readonly metadata: Record<string, unknown> }
  | { readonly kind: 'pod'; readonly namespace: string; readonly name: string };

/** The request without the destination IP, which the store side resolves. */
export type RequestDraft = Omit<ExplainRequest, 'destinationIp' | 'sourceIp'>;

export interface ExplainQuery {
  readonly proxy: ProxyRef;
  readonly request: RequestDraft;
}

const PROTOCOLS: readonly RequestProtocol[] = ['http/1.1', 'h2c', 'h2', 'tcp'];
const PROTOCOL_ALIASES: Readonly<Record<string, RequestProtocol>> = { http: 'http/1.1', http2: 'h2c', grpc: 'h2c' };
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const POD = /^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)\/([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)$/;

/** `host:port`, `[v6]:port`. */
export function parseTarget(to: string): { host: string; port: number } {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:\s/]+):([0-9]{1,5})$/.exec(to);
  const port = m ? Number(m[2]) : NaN;
  if (!m || port < 1 || port > 65535)
    throw badRequest(`to: ${JSON.stringify(to)} is not host:port (e.g. reviews.default.svc.cluster.local:9080)`);
  return { host: (m[1] as string).replace(/^\[|\]$/g, '').toLowerCase(), port };
}

/** `k=v` or `k: v` → lower-case name and value; repeated names are joined with `,` as Envoy matches them. */
export function parseHeaders(items: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of items) {
    const m = /^(:?[^=:\s]+)\s*[=:]\s?(.*)$/.exec(item);
    if (!m || !TOKEN.test((m[1] as string).replace(/^:/, '')))
      throw badRequest(`header: ${JSON.stringify(item)} is not NAME=VALUE`);
    const name = (m[1] as string).toLowerCase();
    out[name] = out[name] === undefined ? (m[2] as string) : `${out[name]},${m[2] as string}`;
  }
  return out;
}

function parseProtocol(p: string | undefined, tls: boolean): RequestProtocol {
  if (p === undefined) return tls ? 'h2' : 'http/1.1';
  const v = PROTOCOL_ALIASES[p] ?? p;
  if (!(PROTOCOLS as readonly string[]).includes(v))
    throw badRequest(`protocol: use one of http (http/1.1), h2c, h2 (over TLS), tcp; got ${JSON.stringify(p)}`);
  return v as RequestProtocol;
}

function parseProxy(f: ExplainQueryFields): ProxyRef {
  if (f.pod !== undefined && f.node !== undefined) throw badRequest('give node or pod, not both');
  if (f.pod !== undefined) {
    const m = POD.exec(f.pod);
    if (!m) throw badRequest(`pod: ${JSON.stringify(f.pod)} is not NAMESPACE/NAME`);
    return { kind: 'pod', namespace: m[1] as string, name: m[3] as string };
  }
  if (f.node === undefined || f.node === '') throw badRequest('node or pod is required (which proxy sends the request)');
  if (f.metadata !== undefined && f.node === undefined) throw badRequest('metadata needs node');
  return { kind: 'node', id: f.node, metadata: f.metadata ?? {} };
}

/**
 * The ALPN a TLS client offers: a sidecar calling another sidecar over Istio mTLS offers Istio's
 * own (`istio-http/1.1`, `istio-h2`, `istio-peer-exchange`, `istio`); an application speaking TLS
 * itself offers the standard ones.
 */
function offeredAlpn(inbound: boolean, protocol: RequestProtocol): string[] {
  if (inbound)
    return protocol === 'tcp' ? ['istio-peer-exchange', 'istio'] : [protocol === 'http/1.1' ? 'istio-http/1.1' : 'istio-h2', 'istio'];
  return protocol === 'tcp' ? [] : protocol === 'http/1.1' ? ['http/1.1'] : ['h2', 'http/1.1'];
}

export function parseExplainQuery(f: ExplainQueryFields): ExplainQuery {
  const proxy = parseProxy(f);
  if (f.to === undefined || f.to === '') throw badRequest('to is required (host:port)');
  const { host, port } = parseTarget(f.to);
  const tls = f.tls === true || f.sni !== undefined;
  const protocol = parseProtocol(f.protocol, tls);
  const path = f.path ?? '/';
  if (!path.startsWith('/') || /[\s]/.test(path)) throw badRequest(`path: ${JSON.stringify(path)} must start with / and hold no spaces`);
  const method = (f.method ?? 'GET').toUpperCase();
  if (!TOKEN.test(method)) throw badRequest(`method: ${JSON.stringify(f.method)} is not an HTTP method`);
  return {
    proxy,
    request: {
      direction: f.inbound === true ? 'inbound' : 'outbound',
      host,
      port,
      protocol,
      tls,
      ...(f.sni !== undefined ? { sni: f.sni } : {}),
      ...(tls ? { alpn: offeredAlpn(f.inbound === true, protocol) } : {}),
      method,
      path,
      headers: parseHeaders(f.headers ?? []),
    },
  };
}

/** `10..15` → [10, 15]. */
export function parseRange(text: string): { from: string; to: string } {
  const m = /^(.+)\.\.(.+)$/.exec(text);
  if (!m) throw badRequest(`across: ${JSON.stringify(text)} is not FROM..TO (e.g. 10..15)`);
  return { from: m[1] as string, to: m[2] as string };
}

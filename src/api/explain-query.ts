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

/** How a field is named in messages: `to` in the API, `--to` in the CLI. */
export type Namer = (field: string) => string;
const plain: Namer = (field) => field;

const PROTOCOLS: readonly RequestProtocol[] = ['http/1.1', 'h2c', 'h2', 'tcp'];
const PROTOCOL_ALIASES: Readonly<Record<string, RequestProtocol>> = { http: 'http/1.1', http2: 'h2c', grpc: 'h2c' };
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const POD = /^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)\/([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)$/;

/** `host:port`, `[v6]:port`. */
export function parseTarget(to: string, name: Namer = plain): { host: string; port: number } {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:\s/]+):([0-9]{1,5})$/.exec(to);
  const port = m ? Number(m[2]) : NaN;
  if (!m || port < 1 || port > 65535)
    throw badRequest(
      `${name('to')}: ${JSON.stringify(to)} is not host:port (e.g. reviews.default.svc.cluster.local:9080)`,
    );
  return { host: (m[1] as string).replace(/^\[|\]$/g, '').toLowerCase(), port };
}

/** `k=v` or `k: v` → lower-case name and value; repeated names are joined with `,` as Envoy matches them. */
export function parseHeaders(items: readonly string[], name: Namer = plain): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of items) {
    const m = /^(:?[^=:\s]+)\s*[=:]\s?(.*)$/.exec(item);
    if (!m || !TOKEN.test((m[1] as string).replace(/^:/, '')))
      throw badRequest(`${name('header')}: ${JSON.stringify(item)} is not NAME=VALUE`);
    const key = (m[1] as string).toLowerCase();
    out[key] = out[key] === undefined ? (m[2] as string) : `${out[key]},${m[2] as string}`;
  }
  return out;
}

/** Default: http/1.1, or h2 for an application speaking TLS itself (Istio mTLS carries the app's own protocol). */
function parseProtocol(p: string | undefined, appTls: boolean, name: Namer): RequestProtocol {
  if (p === undefined) return appTls ? 'h2' : 'http/1.1';
  const v = PROTOCOL_ALIASES[p] ?? p;
  if (!(PROTOCOLS as readonly string[]).includes(v))
    throw badRequest(
      `${name('protocol')}: use one of http (http/1.1), h2c, h2 (over TLS), tcp; got ${JSON.stringify(p)}`,
    );
  return v as RequestProtocol;
}

function parseProxy(f: ExplainQueryFields, name: Namer): ProxyRef {
  if (f.pod !== undefined && f.node !== undefined) throw badRequest(`give ${name('node')} or ${name('pod')}, not both`);
  if (f.pod !== undefined) {
    const m = POD.exec(f.pod);
    if (!m) throw badRequest(`${name('pod')}: ${JSON.stringify(f.pod)} is not NAMESPACE/NAME`);
    return { kind: 'pod', namespace: m[1] as string, name: m[3] as string };
  }
  if (f.metadata !== undefined && f.node === undefined) throw badRequest(`${name('metadata')} needs ${name('node')}`);
  if (f.node === undefined || f.node === '')
    throw badRequest(`${name('node')} or ${name('pod')} is required (which proxy sends the request)`);
  return { kind: 'node', id: f.node, metadata: f.metadata ?? {} };
}

/**
 * The ALPN a TLS client offers: a sidecar calling another sidecar over Istio mTLS offers Istio's
 * own (`istio-http/1.1`, `istio-h2`, `istio-peer-exchange`, `istio`); an application speaking TLS
 * itself offers the standard ones.
 */
function offeredAlpn(inbound: boolean, protocol: RequestProtocol): string[] {
  if (inbound)
    return protocol === 'tcp'
      ? ['istio-peer-exchange', 'istio']
      : [protocol === 'http/1.1' ? 'istio-http/1.1' : 'istio-h2', 'istio'];
  return protocol === 'tcp' ? [] : protocol === 'http/1.1' ? ['http/1.1'] : ['h2', 'http/1.1'];
}

export function parseExplainQuery(f: ExplainQueryFields, name: Namer = plain): ExplainQuery {
  const proxy = parseProxy(f, name);
  if (f.to === undefined || f.to === '') throw badRequest(`${name('to')} is required (host:port)`);
  const { host, port } = parseTarget(f.to, name);
  const tls = f.tls === true || f.sni !== undefined;
  const protocol = parseProtocol(f.protocol, tls && f.inbound !== true, name);
  const path = f.path ?? '/';
  if (!path.startsWith('/') || /[\s]/.test(path))
    throw badRequest(`${name('path')}: ${JSON.stringify(path)} must start with / and hold no spaces`);
  const method = (f.method ?? 'GET').toUpperCase();
  if (!TOKEN.test(method)) throw badRequest(`${name('method')}: ${JSON.stringify(f.method)} is not an HTTP method`);
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
      headers: parseHeaders(f.headers ?? [], name),
    },
  };
}

/** `10..15` → [10, 15]. */
export function parseRange(text: string, name: Namer = plain): { from: string; to: string } {
  const m = /^(.+)\.\.(.+)$/.exec(text);
  if (!m) throw badRequest(`${name('across')}: ${JSON.stringify(text)} is not FROM..TO (e.g. 10..15)`);
  return { from: m[1] as string, to: m[2] as string };
}

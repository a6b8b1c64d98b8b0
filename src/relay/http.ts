/**
 * The relay's HTTP side (a hono app on @hono/node-server): /healthz (the process is up), /readyz
 * (a snapshot is served: 200; before that 503 with the reason), /debug/proxies (per proxy what was
 * sent and ACKed, as `istioctl proxy-status`, a page at a time), /debug/snapshot (what the follower
 * serves and why it may be behind), /metrics (Prometheus text), and POST /notify: a publisher's
 * hint that the channel head moved (the relay reads the head now; the store stays the truth, so a
 * hint carries no data and needs no credentials: the worst a caller can do is an early head read,
 * and bursts coalesce into one).
 *
 * /debug/* names every proxy and its identity: it answers only clients on the relay's own host
 * (loopback), or anyone presenting `authorization: Bearer <debug token>` when one is configured.
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { serve, type ServerType } from '@hono/node-server';
import { Hono, type Context } from 'hono';
import type { AddressInfo } from 'node:net';
import { isValidChannel } from '../snapshot/manifest.js';
import { errorMessage, silentLogger, type RelayLogger } from './log.js';

/** A page request of /debug/proxies: `?limit=` (default 100, at most 1000) and `?cursor=`. */
export interface ProxiesPage {
  readonly limit: number;
  readonly cursor?: string;
}

export const PROXIES_PAGE_DEFAULT = 100;
export const PROXIES_PAGE_MAX = 1000;

export interface HttpSources {
  readonly readiness: () => { readonly ready: boolean; readonly reason?: string; readonly [k: string]: unknown };
  readonly proxies: (page: ProxiesPage) => unknown;
  readonly snapshot: () => unknown;
  readonly metrics: () => Promise<{ readonly contentType: string; readonly body: string }>;
  /** A head hint for `channel` (or the relay's own when absent); false when it follows another channel. */
  readonly notify: (channel: string | undefined) => boolean;
}

export interface HttpServerOptions {
  readonly host?: string;
  /** 0 picks a free port. */
  readonly port: number;
  readonly sources: HttpSources;
  readonly log?: RelayLogger;
  /** A token that opens /debug/* to remote clients; without it, only loopback clients see /debug/*. */
  readonly debugToken?: string;
}

export interface RelayHttpServer {
  readonly port: number;
  close(): Promise<void>;
}

const ROUTES = ['/healthz', '/readyz', '/debug/proxies', '/debug/snapshot', '/metrics', 'POST /notify'];

/** The routes as a hono app (no I/O of its own: serve it, or call `app.request` in tests). */
/** What @hono/node-server binds: the Node request, for the peer's address. */
type NodeBindings = { Bindings: { incoming?: IncomingMessage } };

export function relayHttpApp(
  sources: HttpSources,
  log: RelayLogger = silentLogger,
  debugToken?: string,
): Hono<NodeBindings> {
  const app = new Hono<NodeBindings>();
  app.use(async (c, next) => {
    const post = c.req.method === 'POST' && c.req.path === '/notify';
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD' && !post)
      return json(c, 405, { error: 'only GET (and POST /notify)' });
    await next();
  });
  app.use('/debug/*', async (c, next) => {
    // In-process requests (app.request, no socket) are the relay's own.
    const peer = c.env?.incoming?.socket.remoteAddress;
    if (peer === undefined || isLoopback(peer) || tokenMatches(c.req.header('authorization'), debugToken))
      return next();
    return json(c, 403, {
      error: debugToken
        ? '/debug/* needs authorization: Bearer <the relay debug token> from a remote client'
        : '/debug/* answers only on the relay host (loopback); set a debug token to open it',
    });
  });
  app.get('/healthz', (c) => json(c, 200, { ok: true }));
  app.get('/readyz', (c) => {
    const r = sources.readiness();
    return json(c, r.ready ? 200 : 503, r);
  });
  app.get('/debug/proxies', (c) => {
    const limitParam = c.req.query('limit');
    const limit = limitParam === undefined ? PROXIES_PAGE_DEFAULT : Number(limitParam);
    if (!Number.isInteger(limit) || limit < 1 || limit > PROXIES_PAGE_MAX)
      return json(c, 400, { error: `limit must be an integer from 1 to ${PROXIES_PAGE_MAX}` });
    const cursor = c.req.query('cursor');
    try {
      return json(c, 200, sources.proxies({ limit, ...(cursor ? { cursor } : {}) }));
    } catch (e) {
      if (e instanceof RangeError) return json(c, 400, { error: e.message });
      throw e;
    }
  });
  app.get('/debug/snapshot', (c) => json(c, 200, sources.snapshot()));
  app.get('/metrics', async (c) => {
    const m = await sources.metrics();
    return c.body(m.body, 200, { 'content-type': m.contentType });
  });
  app.get('/notify', (c) => json(c, 405, { error: 'POST /notify' }));
  app.post('/notify', (c) => {
    const channel = c.req.query('channel');
    if (channel !== undefined && !isValidChannel(channel))
      return json(c, 400, { error: "channel: use letters, digits, '.', '_' and '-'" });
    const followed = sources.notify(channel);
    return json(c, followed ? 202 : 404, followed ? { accepted: true } : { error: `not following channel ${channel}` });
  });
  app.notFound((c) => json(c, 404, { error: `no route ${c.req.path}`, routes: ROUTES }));
  app.onError((e, c) => {
    log.log('error', 'http.error', { path: c.req.path, error: errorMessage(e) });
    return json(c, 500, { error: errorMessage(e) });
  });
  return app;
}

export async function startHttpServer(opts: HttpServerOptions): Promise<RelayHttpServer> {
  const app = relayHttpApp(opts.sources, opts.log, opts.debugToken);
  let server: ServerType | undefined;
  await new Promise<void>((resolve, reject) => {
    server = serve({ fetch: app.fetch, port: opts.port, hostname: opts.host ?? '0.0.0.0' }, () => resolve());
    server.once('error', reject);
  });
  const http = server as ServerType & { keepAliveTimeout?: number; closeAllConnections?: () => void };
  // Scrapes and probes are short; don't let an idle keep-alive connection hold up shutdown.
  http.keepAliveTimeout = 5_000;
  const port = (http.address() as AddressInfo).port;
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections?.();
      }),
  };
}

const isLoopback = (address: string): boolean =>
  address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');

function tokenMatches(header: string | undefined, token: string | undefined): boolean {
  if (!token || !header?.startsWith('Bearer ')) return false;
  const given = Buffer.from(header.slice('Bearer '.length));
  const wanted = Buffer.from(token);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

function json(c: Context, status: 200 | 202 | 400 | 403 | 404 | 405 | 500 | 503, body: unknown): Response {
  return c.body(`${JSON.stringify(body, null, 2)}\n`, status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
  });
}

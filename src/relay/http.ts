/**
 * The relay's HTTP side (node:http): /healthz (the process is up), /readyz (a snapshot is served:
 * 200; before that 503 with the reason), /debug/proxies (per proxy what was sent and ACKed, as
 * `istioctl proxy-status`), /debug/snapshot (what the follower serves and why it may be behind),
 * /metrics (Prometheus text).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { errorMessage, silentLogger, type RelayLogger } from './log.js';

export interface HttpSources {
  readonly readiness: () => { readonly ready: boolean; readonly reason?: string; readonly [k: string]: unknown };
  readonly proxies: () => unknown;
  readonly snapshot: () => unknown;
  readonly metrics: () => Promise<{ readonly contentType: string; readonly body: string }>;
}

export interface HttpServerOptions {
  readonly host?: string;
  /** 0 picks a free port. */
  readonly port: number;
  readonly sources: HttpSources;
  readonly log?: RelayLogger;
}

export interface RelayHttpServer {
  readonly port: number;
  close(): Promise<void>;
}

export async function startHttpServer(opts: HttpServerOptions): Promise<RelayHttpServer> {
  const log = opts.log ?? silentLogger;
  const { sources } = opts;
  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      log.log('error', 'http.error', { path: req.url, error: errorMessage(e) });
      if (!res.headersSent) send(res, 500, { error: errorMessage(e) });
      else res.destroy();
    });
  });
  // Scrapes and probes are short; don't let an idle keep-alive connection hold up shutdown.
  server.keepAliveTimeout = 5_000;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://relay').pathname;
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, { error: 'only GET' });
    switch (path) {
      case '/healthz':
        return send(res, 200, { ok: true });
      case '/readyz': {
        const r = sources.readiness();
        return send(res, r.ready ? 200 : 503, r);
      }
      case '/debug/proxies':
        return send(res, 200, sources.proxies());
      case '/debug/snapshot':
        return send(res, 200, sources.snapshot());
      case '/metrics': {
        const m = await sources.metrics();
        res.writeHead(200, { 'content-type': m.contentType });
        res.end(m.body);
        return;
      }
      default:
        return send(res, 404, { error: `no route ${path}`, routes: ['/healthz', '/readyz', '/debug/proxies', '/debug/snapshot', '/metrics'] });
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '0.0.0.0', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = `${JSON.stringify(body, null, 2)}\n`;
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(text);
}

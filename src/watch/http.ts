/**
 * The watcher's HTTP side: /healthz (the process is up), /readyz (200 once every informer has
 * synced, else 503 with the informers still listing), /metrics (Prometheus text). A small hono app
 * (watchHttpApp, testable without a socket) served by @hono/node-server.
 */
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { errorMessage } from '../log.js';

export interface WatchHttpSources {
  readonly readiness: () => { readonly ready: boolean; readonly [k: string]: unknown };
  readonly metrics: () => Promise<{ readonly contentType: string; readonly body: string }>;
}

export interface WatchHttpServer {
  readonly port: number;
  close(): Promise<void>;
}

export function watchHttpApp(sources: WatchHttpSources): Hono {
  const app = new Hono();
  app.get('/healthz', (c) => c.json({ ok: true }));
  app.get('/readyz', (c) => {
    const r = sources.readiness();
    return c.json(r, r.ready ? 200 : 503);
  });
  app.get('/metrics', async (c) => {
    const m = await sources.metrics();
    return c.body(m.body, 200, { 'content-type': m.contentType });
  });
  // GET routes answer HEAD too (hono); any other method on a known path is a 405.
  app.all('/*', (c) =>
    ['/healthz', '/readyz', '/metrics'].includes(c.req.path)
      ? c.json({ error: 'GET only' }, 405)
      : c.json({ error: 'not found' }, 404),
  );
  app.onError((err, c) => c.json({ error: errorMessage(err) }, 500));
  return app;
}

export function startWatchHttp(port: number, sources: WatchHttpSources, host = '0.0.0.0'): Promise<WatchHttpServer> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: watchHttpApp(sources).fetch, hostname: host, port }, (info: AddressInfo) =>
      resolve({
        port: info.port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            // Keep-alive connections (a Prometheus scraper's) would hold close() open.
            if ('closeAllConnections' in server) server.closeAllConnections();
          }),
      }),
    );
    server.once('error', reject);
  });
}

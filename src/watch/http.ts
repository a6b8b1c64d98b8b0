/**
 * The watcher's HTTP side: /healthz (the process is up), /readyz (200 once every informer has
 * synced, else 503 with the informers still listing), /metrics (Prometheus text).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface WatchHttpSources {
  readonly readiness: () => { readonly ready: boolean; readonly [k: string]: unknown };
  readonly metrics: () => Promise<{ readonly contentType: string; readonly body: string }>;
}

export interface WatchHttpServer {
  readonly port: number;
  close(): Promise<void>;
}

export async function startWatchHttp(port: number, sources: WatchHttpSources, host = '0.0.0.0'): Promise<WatchHttpServer> {
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const json = (code: number, body: unknown) => res.writeHead(code, { 'content-type': 'application/json' }).end(`${JSON.stringify(body)}\n`);
    if (req.method !== 'GET' && req.method !== 'HEAD') return json(405, { error: 'GET only' });
    if (path === '/healthz') return json(200, { ok: true });
    if (path === '/readyz') {
      const r = sources.readiness();
      return json(r.ready ? 200 : 503, r);
    }
    if (path === '/metrics') {
      sources.metrics().then(
        (m) => res.writeHead(200, { 'content-type': m.contentType }).end(m.body),
        (err: unknown) => json(500, { error: String(err) }),
      );
      return;
    }
    json(404, { error: 'not found' });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Serves the API app over node:http (@hono/node-server). Node only: app.ts never imports this. */
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { Hono } from 'hono';

export interface ApiServer {
  readonly port: number;
  close(): Promise<void>;
}

// Hono<any>: the server does not care about the app's context variables.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function startApiServer(app: Hono<any>, opts: { host?: string; port: number }): Promise<ApiServer> {
  return new Promise((resolve, reject) => {
    const server = serve(
      { fetch: app.fetch, hostname: opts.host ?? '0.0.0.0', port: opts.port },
      (info: AddressInfo) => {
        resolve({
          port: info.port,
          close: () =>
            new Promise<void>((done) => {
              server.close(() => done());
              // Keep-alive connections would hold close() open until they time out.
              if ('closeAllConnections' in server) server.closeAllConnections();
            }),
        });
      },
    );
    server.once('error', reject);
  });
}

/**
 * `POST /compile`: the compile function the watcher's `--compile-url` points at (wire format:
 * src/watch/remote-protocol.ts). It compiles and answers; it stores nothing and reads nothing, so
 * it needs no store and leaves no audit record — the watcher publishes what it gets back.
 *
 * The watcher sends no Authorization header, so the route is open unless MESHSNAP_COMPILE_TOKEN
 * is set (then it needs that bearer token; put the function behind a private network, Cloudflare
 * Access or IAM auth instead when a watcher must reach it without one).
 */
import type { Hono, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { constantTimeEqual } from '../../src/api/auth.js';
import { errorResponse } from '../../src/api/errors.js';
import { badRequest, payloadTooLarge, unauthorized } from '../../src/errors.js';
import type { Hasher } from '../../src/snapshot/digest.js';
import { RemoteCompileError, serveCompileRequest } from '../../src/watch/remote-protocol.js';

export interface CompileRouteOptions {
  /** When set, callers must send `Authorization: Bearer <token>`. */
  readonly token?: string;
  readonly hasher?: Hasher;
  /** Largest request body (default 32 MiB). */
  readonly maxBodyBytes?: number;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any app: the route uses no context variables
export function mountCompileRoute(app: Hono<any>, opts: CompileRouteOptions = {}): void {
  const max = opts.maxBodyBytes ?? 32 * 1024 * 1024;
  const checkToken: MiddlewareHandler = async (c, next) => {
    if (opts.token !== undefined) {
      const presented = /^Bearer[ ]+(\S+)\s*$/i.exec(c.req.header('authorization') ?? '')?.[1] ?? '';
      if (!constantTimeEqual(presented, opts.token))
        return errorResponse(unauthorized('this needs Authorization: Bearer <compile token>'));
    }
    await next();
  };
  const limit = bodyLimit({ maxSize: max, onError: () => errorResponse(payloadTooLarge(max)) });
  app.post('/compile', checkToken, limit, async (c) => {
    const text = await c.req.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (err) {
      return errorResponse(badRequest(`request body is not JSON: ${(err as Error).message}`));
    }
    try {
      return c.json(serveCompileRequest(body, opts.hasher));
    } catch (err) {
      if (err instanceof RemoteCompileError) return errorResponse(badRequest(err.message));
      // User data yields diagnostics, never a throw: anything else is a bug, reported by the app's onError.
      throw err;
    }
  });
}

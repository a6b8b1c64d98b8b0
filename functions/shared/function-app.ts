/**
 * The app every serverless entry serves: the API (createApp), the audit page (mountUi) and
 * POST /compile. Pure; the Worker and the Lambda only differ in the store and the hasher.
 */
import type { Hono } from 'hono';
import { createApp, type AppOptions } from '../../src/api/app.js';
import type { ApiEnv } from '../../src/api/context.js';
import { mountUi } from '../../src/api/ui/mount.js';
import { mountCompileRoute } from './compile-route.js';

export interface FunctionAppOptions extends AppOptions {
  /** Bearer token POST /compile needs (none: open; it stores nothing). */
  readonly compileToken?: string;
}

export function functionApp(opts: FunctionAppOptions): Hono<ApiEnv> {
  const app = createApp(opts);
  // The page, unless the app already serves it (then a second GET / would be dead weight).
  if (!app.routes.some((r) => r.method === 'GET' && r.path === '/')) mountUi(app);
  mountCompileRoute(app, {
    ...(opts.compile?.hasher ? { hasher: opts.compile.hasher } : {}),
    ...(opts.compileToken !== undefined ? { token: opts.compileToken } : {}),
  });
  return app;
}

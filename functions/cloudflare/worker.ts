/**
 * The Cloudflare Worker: the meshsnap API, its audit page and the watcher's compile function, over
 * an R2 bucket binding. Plain workerd, no `nodejs_compat`: the app, the compiler and the R2 store
 * are pure, and hashing is the pure-JS default (@noble/hashes).
 *
 * Bindings (wrangler.toml, `wrangler secret put`):
 *   MESHSNAP_BUCKET        the R2 bucket (snapshots, audit log, stored inputs)
 *   MESHSNAP_PREFIX        optional key prefix inside the bucket
 *   MESHSNAP_WRITE_TOKEN … the auth and channel settings of functions/shared/env.ts
 *   MESHSNAP_GC_KEEP …     the cron's retention settings and the store's freshen interval
 *                          (functions/shared/gc-env.ts)
 *
 * Routes: /api/v1/… and /api/openapi.json (src/api), the audit page at /, and POST /compile (functions/shared/compile-route.ts), which `meshsnap watch --compile-url` can use.
 * Cron (`[triggers] crons`): gc over the bucket (cron-gc.ts).
 */
import type { Hono } from 'hono';
import { errorResponse } from '../../src/api/errors.js';
import { errorMessage, createLogger } from '../../src/log.js';
import { MeshsnapError } from '../../src/errors.js';
import type { ObjectStore } from '../../src/snapshot/store/object-store.js';
import { r2Store, type R2BucketLike } from '../../src/snapshot/store/r2.js';
import { authFromEnv, channelFromEnv, envString, identityFromEnv } from '../shared/env.js';
import { functionApp } from '../shared/function-app.js';
import { freshenAfterMsFromEnv } from '../shared/gc-env.js';
import { cronGc, type ScheduledEventLike } from './cron-gc.js';

export interface WorkerEnv {
  readonly MESHSNAP_BUCKET: R2BucketLike;
  readonly [name: string]: unknown;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the app's context variables do not matter here
type App = Hono<any>;

/**
 * One app per env object: workerd hands the same env to every request of an isolate, so the app
 * (and its routes) is built once per isolate, not per request.
 */
const apps = new WeakMap<object, App>();
const log = createLogger();

/** The store over the bucket: MESHSNAP_PREFIX, MESHSNAP_FRESHEN_MINUTES. */
export function workerStore(env: WorkerEnv): ObjectStore {
  if (!env.MESHSNAP_BUCKET) throw new Error('no R2 binding MESHSNAP_BUCKET (see wrangler.toml)');
  const prefix = envString(env, 'MESHSNAP_PREFIX');
  const freshenAfterMs = freshenAfterMsFromEnv(env);
  return r2Store(env.MESHSNAP_BUCKET, {
    ...(prefix !== undefined ? { prefix } : {}),
    ...(freshenAfterMs !== undefined ? { freshenAfterMs } : {}),
  });
}

export function workerApp(env: WorkerEnv): App {
  let app = apps.get(env);
  if (!app) {
    const compileToken = envString(env, 'MESHSNAP_COMPILE_TOKEN');
    app = functionApp({
      store: workerStore(env),
      channelDefault: channelFromEnv(env),
      auth: authFromEnv(env),
      identity: identityFromEnv(env),
      onInternalError: (err) =>
        log.error('api.internal_error', { error: errorMessage(err), stack: (err as Error).stack }),
      ...(compileToken !== undefined ? { compileToken } : {}),
    });
    apps.set(env, app);
  }
  return app;
}

export default {
  fetch(request: Request, env: WorkerEnv, ctx: unknown): Response | Promise<Response> {
    let app: App;
    try {
      app = workerApp(env);
    } catch (err) {
      // A missing binding or secret: say which, in the API's error shape (never the secret's value).
      log.error('worker.config_error', { error: errorMessage(err) });
      return errorResponse(new MeshsnapError('internal', `configuration: ${errorMessage(err)}`));
    }
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- hono's ExecutionContext type vs workerd's
    return app.fetch(request, env, ctx as any);
  },

  async scheduled(event: ScheduledEventLike, env: WorkerEnv): Promise<void> {
    await cronGc(event, { env, store: () => workerStore(env) });
  },
};

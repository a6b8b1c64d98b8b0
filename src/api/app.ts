/**
 * The meshsnap HTTP API as one Hono app for every runtime (Node, workerd, Lambda). Pure: no node:*
 * — the store, the clock, the token configuration and the identity resolver are injected.
 *
 *     const app = createApp({ store, auth: { writeToken: env.MESHSNAP_TOKEN } });
 *     export default app;                        // a Worker; or serve(app) / handle(app)
 *
 * Routes live under /api/v1 (routes/*.ts); the OpenAPI document is at /api/openapi.json.
 */
import { Hono, type MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { every } from 'hono/combine';
import type { PipelineOptions } from '../pipeline.js';
import { assertChannel } from '../snapshot/manifest.js';
import { newPackCache } from '../snapshot/store/pack-cache.js';
import type { SnapshotStore } from '../snapshot/store/store.js';
import { COMPILER } from '../version.js';
import { authenticator, tokenIdentity, type Access, type AuthConfig, type IdentityResolver } from './auth.js';
import type { ApiDeps, ApiEnv } from './context.js';
import { notFound, payloadTooLarge } from '../errors.js';
import { errorReply, retryAfterOf } from './errors.js';
import { historyBinding } from './history-binding.js';
import type { HistoryOps } from './history-port.js';
import { inlineRunner, type OffloadRunner } from './offload.js';
import { openApiDocument } from './openapi.js';
import { actionRoutes } from './routes/actions.js';
import { auditRoutes } from './routes/audit.js';
import { channelRoutes } from './routes/channels.js';
import { compileRoutes } from './routes/compile.js';
import { diffRoutes } from './routes/diff.js';
import { explainRoutes } from './routes/explain.js';
import { gcRoutes } from './routes/gc.js';

export interface AppOptions {
  readonly store: SnapshotStore;
  /** Default `main`. */
  readonly channelDefault?: string;
  /** Extra channels to list before anything is published to them. */
  readonly channels?: readonly string[];
  readonly auth: AuthConfig;
  /** Wall clock for `when` in the audit log. Default: the system clock. */
  readonly clock?: () => Date;
  /** Who a write is recorded as. Default: the token's name (tokenIdentity). */
  readonly identity?: IdentityResolver;
  /** Compile options for POST /compile (pass a fast hasher in Node). */
  readonly compile?: PipelineOptions;
  /** The history library; tests may inject a double. */
  readonly history?: HistoryOps;
  /** Largest request body accepted (default 32 MiB). */
  readonly maxBodyBytes?: number;
  /** Where compile and diff run (default: inline; `serve` passes a worker-thread runner). */
  readonly offload?: OffloadRunner;
  /** Called for every 5xx error (logging); the response never carries a stack or a server path. */
  readonly onInternalError?: (err: unknown) => void;
}

export function createApp(opts: AppOptions): Hono<ApiEnv> {
  const channelDefault = opts.channelDefault ?? 'main';
  assertChannel(channelDefault);
  const history = opts.history ?? historyBinding(opts.compile?.hasher);
  const deps: ApiDeps = {
    store: opts.store,
    channelDefault,
    channels: opts.channels ?? [],
    auth: authenticator(opts.auth),
    clock: opts.clock ?? (() => new Date()),
    identity: opts.identity ?? tokenIdentity,
    compile: opts.compile ?? {},
    maxBodyBytes: opts.maxBodyBytes ?? 32 * 1024 * 1024,
    offload: opts.offload ?? inlineRunner(history, opts.compile ?? {}),
    packCache: newPackCache(),
  };
  const app = new Hono<ApiEnv>();

  const guard =
    (access: Access): MiddlewareHandler<ApiEnv> =>
    async (c, next) => {
      const caller = deps.auth.check(c.req.header('authorization'), access);
      c.set('caller', caller);
      if (access === 'write') c.set('actor', await deps.identity(caller, (name) => c.req.header(name)));
      await next();
    };
  const read = guard('read');
  // After the token check, so an unauthenticated body is never read; the limit counts a chunked
  // body as it arrives and stops reading it at the limit.
  const limit = bodyLimit({
    maxSize: deps.maxBodyBytes,
    onError: () => {
      throw payloadTooLarge(deps.maxBodyBytes);
    },
  });
  const write = every(guard('write'), limit);

  app.onError((err, c) => {
    const { status, body } = errorReply(err);
    if (status >= 500) opts.onInternalError?.(err);
    if (status === 401) c.header('WWW-Authenticate', 'Bearer realm="meshsnap"');
    const retryAfter = retryAfterOf(err);
    if (retryAfter !== undefined) c.header('Retry-After', String(retryAfter));
    return c.json(body, status);
  });
  app.notFound((c) => {
    const { status, body } = errorReply(notFound(`no route ${c.req.method} ${new URL(c.req.url).pathname}`));
    return c.json(body, status);
  });

  // The document itself is always readable: it describes, it does not disclose.
  const openapi = openApiDocument({ readsOpen: deps.auth.openReads, version: COMPILER.version });
  app.get('/api/openapi.json', (c) => c.json(openapi));

  channelRoutes(app, deps, history, read);
  diffRoutes(app, deps, history, read);
  explainRoutes(app, deps, history, read);
  auditRoutes(app, deps, history, read);
  compileRoutes(app, deps, history, write);
  actionRoutes(app, deps, history, write);
  gcRoutes(app, deps, history, write);
  return app;
}

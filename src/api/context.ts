/** What every route handler gets: the injected dependencies and, per request, the caller. */
import type { Hono, MiddlewareHandler } from 'hono';
import type { PipelineOptions } from '../pipeline.js';
import type { PackCache } from '../snapshot/store/packs.js';
import type { SnapshotStore } from '../snapshot/store/store.js';
import type { Authenticator, Caller, IdentityResolver } from './auth.js';
import type { OffloadRunner } from './offload.js';

export interface ApiDeps {
  readonly store: SnapshotStore;
  readonly channelDefault: string;
  /** Channels to list even before anything was published to them. */
  readonly channels: readonly string[];
  readonly auth: Authenticator;
  readonly clock: () => Date;
  readonly identity: IdentityResolver;
  /** How POST /compile compiles (the hasher: node:crypto in Node, noble in workerd). */
  readonly compile: PipelineOptions;
  /** Largest accepted request body, in bytes. */
  readonly maxBodyBytes: number;
  /** Runs the heavy work (compile, diff): inline, or off the event loop in `serve`. */
  readonly offload: OffloadRunner;
  /** Decoded packs kept between publishes (bounded, pack-cache.ts): each merge reads the last delta pack from here, not from the store. */
  readonly packCache: PackCache;
}

export interface ApiEnv {
  Variables: {
    caller: Caller;
    /** The caller's recorded identity (writes only). */
    actor: string;
  };
}

export type ApiApp = Hono<ApiEnv>;

/** The auth guard a route runs first (read or write). */
export type Guard = MiddlewareHandler<ApiEnv>;

/**
 * The AWS Lambda entry of the API: the same hono app as every runtime, through hono's Lambda
 * adapter (API Gateway HTTP API payload 2.0, REST API 1.0, function URLs, ALB), over the S3 store
 * of MESHSNAP_STORE, with the audit page at / and POST /compile (the watcher's --compile-url).
 *
 * Handler: `handler` (bundle: scripts/bundle-lambda.mjs → dist-lambda/api/index.mjs). The app is
 * built on the first invocation and reused while the instance stays warm.
 */
import { handle } from 'hono/aws-lambda';
import { historyBinding } from '../../src/api/history-binding.js';
import { createLogger, errorMessage } from '../../src/log.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { authFromEnv, channelFromEnv, envString, identityFromEnv, type EnvLike } from '../shared/env.js';
import { functionApp } from '../shared/function-app.js';
import { storeFromEnv, type AwsOptions } from './store.js';

export type ApiHandler = ReturnType<typeof handle>;

export function createApiHandler(env: EnvLike = process.env, opts: AwsOptions = {}): ApiHandler {
  // node:crypto hashes several times faster than the pure-JS default, and gives the same digests.
  const compile = { hasher: nodeSha256Hex };
  const log = createLogger();
  const compileToken = envString(env, 'MESHSNAP_COMPILE_TOKEN');
  const app = functionApp({
    store: storeFromEnv(env, opts),
    channelDefault: channelFromEnv(env),
    auth: authFromEnv(env),
    identity: identityFromEnv(env),
    compile,
    history: historyBinding(compile.hasher),
    // CloudWatch gets the stack; the response gets only the message.
    onInternalError: (err) =>
      log.error('api.internal_error', { error: errorMessage(err), stack: (err as Error).stack }),
    ...(compileToken !== undefined ? { compileToken } : {}),
  });
  return handle(app);
}

let cached: ApiHandler | undefined;

export const handler: ApiHandler = (event, context) => {
  cached ??= createApiHandler();
  return cached(event, context);
};

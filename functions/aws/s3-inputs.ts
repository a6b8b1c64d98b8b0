/**
 * The AWS Lambda that compiles on upload: S3 "object created" (and "removed") notifications on
 * `inputs/<channel>/…` make it read that channel's whole inputs folder, compile it and publish the
 * result to the channel in MESHSNAP_STORE. A watcher (or CI, or a person with `aws s3 cp`) then
 * only has to upload inputs. An unchanged result publishes nothing; a pinned channel records a
 * candidate. The audit record names the uploader (`s3:<principal id>`) and the key.
 *
 * Environment: MESHSNAP_STORE (s3://…, required), MESHSNAP_INPUTS_PREFIX (default `inputs/`),
 * MESHSNAP_STRICT ("true": publish nothing when any error diagnostic exists).
 *
 * Run it with reserved concurrency 1 (infra/aws does): each run reads the folder as it is *now*, so
 * serial runs always end on the newest uploads, whatever order the events arrive in; parallel runs
 * could finish out of order and publish an older folder last.
 */
import { historyBinding } from '../../src/api/history-binding.js';
import { createLogger, errorMessage } from '../../src/log.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import type { SnapshotStore } from '../../src/snapshot/store/store.js';
import type { S3Client } from '@aws-sdk/client-s3';
import { envString, type EnvLike } from '../shared/env.js';
import { publishInputs, type PublishInputsResult } from '../shared/publish-inputs.js';
import { inputTexts } from './input-files.js';
import { readInputsFolder } from './inputs-folder.js';
import { channelsOf, type S3Event, type SkippedRecord } from './s3-event.js';
import { s3ClientFor, storeFromEnv, storeLocationFromEnv, type AwsOptions } from './store.js';

export interface InputsHandlerResult {
  readonly results: readonly (Omit<PublishInputsResult, 'diagnostics'> & { readonly key: string })[];
  readonly skipped: readonly SkippedRecord[];
}

export type InputsHandler = (event: S3Event) => Promise<InputsHandlerResult>;

const logger = createLogger();
const log = (event: string, fields: Record<string, unknown>): void => logger.info(event, fields);

export function createInputsHandler(
  env: EnvLike = process.env,
  opts: AwsOptions & { readonly now?: () => Date } = {},
): InputsHandler {
  const prefix = (envString(env, 'MESHSNAP_INPUTS_PREFIX') ?? 'inputs/').replace(/^\/+/, '').replace(/\/*$/, '/');
  const strict = envString(env, 'MESHSNAP_STRICT') === 'true';
  const store: SnapshotStore = storeFromEnv(env, opts);
  const client: S3Client = s3ClientFor(storeLocationFromEnv(env), opts);
  const history = historyBinding(nodeSha256Hex);
  const now = opts.now ?? (() => new Date());

  return async (event) => {
    const { touched, skipped } = channelsOf(event, prefix);
    for (const s of skipped) log('inputs.skipped', { ...s });
    const results: InputsHandlerResult['results'][number][] = [];
    const failures: string[] = [];
    for (const t of touched) {
      try {
        const folder = `${prefix}${t.channel}/`;
        const files = inputTexts(await readInputsFolder(client, t.bucket, folder));
        if (files.length === 0) {
          // An emptied folder is not "compile to nothing": serving an empty mesh must be a deliberate act.
          log('inputs.empty', { channel: t.channel, folder });
          results.push({
            channel: t.channel,
            key: t.key,
            status: 'failed',
            version: null,
            digest: null,
            diagnosticCounts: { error: 0, warning: 0 },
            message: `no inputs under ${folder}`,
          });
          continue;
        }
        const op = { actor: `s3:${t.principal}`, at: now(), reason: `${t.eventName} s3://${t.bucket}/${t.key}` };
        const { diagnostics, ...result } = await publishInputs(store, t.channel, files, op, {
          compile: { hasher: nodeSha256Hex },
          strict,
          history,
        });
        log('inputs.compiled', { ...result, key: t.key, files: files.length });
        for (const d of diagnostics) if (d.severity === 'error') log('inputs.diagnostic', { channel: t.channel, ...d });
        results.push({ ...result, key: t.key });
      } catch (e) {
        // Keep going with the other channels; fail the invocation at the end so Lambda retries it.
        failures.push(`${t.channel}: ${(e as Error).message}`);
        logger.error('inputs.failed', {
          channel: t.channel,
          key: t.key,
          error: errorMessage(e),
          stack: (e as Error).stack,
        });
      }
    }
    if (failures.length > 0) throw new Error(`inputs handler failed for ${failures.join('; ')}`);
    return { results, skipped };
  };
}

let cached: InputsHandler | undefined;

export const handler: InputsHandler = (event) => {
  cached ??= createInputsHandler();
  return cached(event);
};

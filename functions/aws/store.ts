/**
 * The Lambdas' store and S3 client, from MESHSNAP_STORE=s3://bucket/prefix[?endpoint=…&region=…&
 * forcePathStyle=true]. Credentials come from the SDK's default chain — in Lambda, the function
 * role's — unless given (tests pass s3rver's keys).
 */
import { S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import type { EnvLike } from '../shared/env.js';
import { ConfigError, envString } from '../shared/env.js';
import { openStore } from '../../src/snapshot/store/open.js';
import { parseS3Url, s3ClientConfig, type S3Location } from '../../src/snapshot/store/s3.js';
import type { SnapshotStore } from '../../src/snapshot/store/store.js';

export interface AwsOptions {
  readonly credentials?: S3ClientConfig['credentials'];
}

export function storeSpecFromEnv(env: EnvLike): string {
  const spec = envString(env, 'MESHSNAP_STORE');
  // A folder would live in the function's /tmp and vanish with the instance.
  if (spec === undefined || !spec.startsWith('s3://')) throw new ConfigError('set MESHSNAP_STORE=s3://bucket/prefix');
  return spec;
}

export function storeFromEnv(env: EnvLike, opts: AwsOptions = {}): SnapshotStore {
  return openStore(storeSpecFromEnv(env), opts.credentials ? { credentials: opts.credentials } : {});
}

/** A client for the inputs objects, pointed where the store is (same endpoint, region, style). */
export function s3ClientFor(location: S3Location, opts: AwsOptions = {}): S3Client {
  return new S3Client(s3ClientConfig(location, opts.credentials));
}

export const storeLocationFromEnv = (env: EnvLike): S3Location => parseS3Url(storeSpecFromEnv(env));

/** The sample Lambda events (test/functions/events/*.json, shaped as AWS documents them), filled in. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from '../helpers/paths.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- events are plain JSON, edited per test
export type Json = any;

export const loadEvent = (name: string): Json =>
  JSON.parse(readFileSync(join(REPO, 'test', 'functions', 'events', name), 'utf8'));

/** An API Gateway HTTP API (payload 2.0) event for `method path?query`, from the sample events. */
export function httpEvent(
  method: 'GET' | 'POST',
  pathAndQuery: string,
  opts: { token?: string; body?: unknown } = {},
): Json {
  const event = loadEvent(method === 'GET' ? 'apigw-v2-get-snapshots.json' : 'apigw-v2-post-compile.json');
  const [path, query = ''] = pathAndQuery.split('?') as [string, string?];
  event.rawPath = path;
  event.requestContext.http.path = path;
  event.rawQueryString = query;
  if (query) event.queryStringParameters = Object.fromEntries(new URLSearchParams(query));
  else delete event.queryStringParameters;
  if (opts.token !== undefined) event.headers.authorization = `Bearer ${opts.token}`;
  else delete event.headers.authorization;
  if (method === 'POST') event.body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body ?? {});
  return event;
}

/** The S3 ObjectCreated sample for `key` (given as S3 sends it: URL-encoded, `+` for space). */
export function s3Event(bucket: string, encodedKey: string, eventName = 'ObjectCreated:Put'): Json {
  const event = loadEvent('s3-object-created.json');
  const record = event.Records[0];
  record.s3.bucket.name = bucket;
  record.s3.bucket.arn = `arn:aws:s3:::${bucket}`;
  record.s3.object.key = encodedKey;
  record.eventName = eventName;
  return event;
}

/** What the Lambda runtime passes as the second argument. */
export const lambdaContext = {
  callbackWaitsForEmptyEventLoop: true,
  functionName: 'meshsnap-api',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:meshsnap-api',
  memoryLimitInMB: '1024',
  awsRequestId: '8f5a3c1e-5c1b-4b59-9a0e-0d2b1e6f7a11',
  logGroupName: '/aws/lambda/meshsnap-api',
  logStreamName: '2025/11/21/[$LATEST]0123456789abcdef0123456789abcdef',
  getRemainingTimeInMillis: () => 30_000,
  done: () => undefined,
  fail: () => undefined,
  succeed: () => undefined,
};

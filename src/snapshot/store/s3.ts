/**
 * The S3 backend (`s3://bucket/prefix?endpoint=…&region=…&forcePathStyle=true`), with
 * @aws-sdk/client-s3. Credentials come from the SDK's default provider chain (environment,
 * shared config/credentials files, SSO, container and instance roles) unless given.
 *
 * Conditional writes: immutable keys with `If-None-Match: *` (412 = already there), the head with
 * `If-Match: <etag>` (412 = moved by someone else). AWS S3 honours both; s3rver ignores them
 * (`conditional: false` in its URL says so). Retries are ours (retry.ts), so the SDK's are off.
 *
 * The SDK is loaded on the first request (loading it costs a process ~25 MB and ~150 ms): a
 * command on a folder store never loads it. Its types only are imported here.
 */
import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import type { Blob, BlobBackend, BlobHead, BlobInfo } from './blob.js';
import { isRetryableStatus, withRetry, type RetryOptions } from './retry.js';

export interface S3Location {
  readonly bucket: string;
  /** Key prefix without leading or trailing '/' ('' for the bucket root). */
  readonly prefix: string;
  readonly endpoint?: string;
  readonly region?: string;
  readonly forcePathStyle?: boolean;
  /** False when the server ignores If-None-Match / If-Match (s3rver): `?conditional=false`. */
  readonly conditional?: boolean;
}

export interface S3BackendOptions {
  readonly credentials?: S3ClientConfig['credentials'];
  readonly retry?: RetryOptions;
  /** Per-request timeout (default 30 s); a timed-out request is retried. */
  readonly requestTimeoutMs?: number;
}

export function parseS3Url(url: string): S3Location {
  const u = new URL(url);
  if (u.protocol !== 's3:') throw new TypeError(`not an s3:// URL: ${url}`);
  if (!u.hostname) throw new TypeError(`no bucket in ${url}`);
  const q = u.searchParams;
  const flag = (name: string): boolean | undefined =>
    q.has(name) ? q.get(name) !== 'false' && q.get(name) !== '0' : undefined;
  const prefix = decodeURIComponent(u.pathname).replace(/^\/+|\/+$/g, '');
  return {
    bucket: u.hostname,
    prefix,
    ...(q.get('endpoint') ? { endpoint: q.get('endpoint') as string } : {}),
    ...(q.get('region') ? { region: q.get('region') as string } : {}),
    ...(flag('forcePathStyle') !== undefined ? { forcePathStyle: flag('forcePathStyle') } : {}),
    ...(flag('conditional') !== undefined ? { conditional: flag('conditional') } : {}),
  };
}

type Sdk = typeof import('@aws-sdk/client-s3');
let sdk: Promise<Sdk> | undefined;
const loadSdk = (): Promise<Sdk> => (sdk ??= import('@aws-sdk/client-s3'));

export class S3Backend implements BlobBackend {
  readonly url: string;
  readonly conditional: boolean;
  private readonly keyPrefix: string;
  private client: S3Client | undefined;

  constructor(
    readonly location: S3Location,
    private readonly opts: S3BackendOptions = {},
  ) {
    this.url = `s3://${location.bucket}${location.prefix ? `/${location.prefix}` : ''}`;
    this.conditional = location.conditional ?? true;
    this.keyPrefix = location.prefix ? `${location.prefix}/` : '';
  }

  /** The SDK and this backend's client, made on first use. */
  private async sdk(): Promise<{ sdk: Sdk; client: S3Client }> {
    const loaded = await loadSdk();
    this.client ??= new loaded.S3Client({
      ...s3ClientConfig(this.location, this.opts.credentials),
      maxAttempts: 1,
      // throwOnRequestTimeout: without it the SDK only logs a warning and waits on.
      requestHandler: {
        requestTimeout: this.opts.requestTimeoutMs ?? 30_000,
        connectionTimeout: 10_000,
        throwOnRequestTimeout: true,
      },
    });
    return { sdk: loaded, client: this.client };
  }

  destroy(): void {
    this.client?.destroy();
  }

  async get(key: string): Promise<Blob | null> {
    return this.retry(async () => {
      try {
        const { sdk, client } = await this.sdk();
        const res = await client.send(
          new sdk.GetObjectCommand({ Bucket: this.location.bucket, Key: this.keyPrefix + key }),
        );
        const bytes = res.Body ? await res.Body.transformToByteArray() : new Uint8Array();
        return { bytes, etag: res.ETag ?? '', modifiedAt: res.LastModified?.getTime() ?? 0 };
      } catch (e) {
        if (isNotFound(e)) return null;
        throw e;
      }
    });
  }

  async exists(key: string): Promise<boolean> {
    return (await this.head(key)) !== null;
  }

  async head(key: string): Promise<BlobHead | null> {
    return this.retry(async () => {
      try {
        const { sdk, client } = await this.sdk();
        const res = await client.send(
          new sdk.HeadObjectCommand({ Bucket: this.location.bucket, Key: this.keyPrefix + key }),
        );
        return { etag: res.ETag ?? '', modifiedAt: res.LastModified?.getTime() ?? 0 };
      } catch (e) {
        if (isNotFound(e)) return null;
        throw e;
      }
    });
  }

  /**
   * Copies the object onto itself with its metadata replaced: S3's way to give an object a new
   * LastModified without sending its bytes again (the bytes, hence the ETag, stay the same). The
   * x-amz-meta-meshsnap-touched header records when, for people looking at the bucket.
   */
  async touch(key: string): Promise<boolean> {
    return this.retry(async () => {
      try {
        const { sdk, client } = await this.sdk();
        await client.send(
          new sdk.CopyObjectCommand({
            Bucket: this.location.bucket,
            Key: this.keyPrefix + key,
            CopySource: `${this.location.bucket}/${encodeURI(this.keyPrefix + key)}`,
            MetadataDirective: 'REPLACE',
            Metadata: { 'meshsnap-touched': new Date().toISOString() },
            ContentType: contentType(key),
          }),
        );
        return true;
      } catch (e) {
        if (isNotFound(e)) return false;
        throw e;
      }
    });
  }

  async putIfAbsent(key: string, bytes: Uint8Array): Promise<'created' | 'exists'> {
    // A server that ignores If-None-Match still gets create-only for one writer (racy for several).
    if (!this.conditional && (await this.exists(key))) return 'exists';
    return this.retry(async () => {
      try {
        await this.put(key, bytes, { IfNoneMatch: '*' });
        return 'created';
      } catch (e) {
        if (statusOf(e) === 412) return 'exists';
        throw e;
      }
    });
  }

  async putIfMatch(key: string, bytes: Uint8Array, etag: string): Promise<'ok' | 'conflict'> {
    return this.retry(async () => {
      try {
        await this.put(key, bytes, { IfMatch: etag });
        return 'ok';
      } catch (e) {
        // 412: the ETag moved; 404: the key is gone. Either way the caller re-reads.
        if (statusOf(e) === 412 || statusOf(e) === 404) return 'conflict';
        throw e;
      }
    });
  }

  async *list(prefix: string): AsyncIterable<BlobInfo> {
    let token: string | undefined;
    do {
      const { sdk, client } = await this.sdk();
      const page = await this.retry(() =>
        client.send(
          new sdk.ListObjectsV2Command({
            Bucket: this.location.bucket,
            Prefix: this.keyPrefix + prefix,
            ...(token ? { ContinuationToken: token } : {}),
          }),
        ),
      );
      for (const o of page.Contents ?? []) {
        if (o.Key) yield { key: o.Key.slice(this.keyPrefix.length), modifiedAt: o.LastModified?.getTime() ?? 0 };
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  async delete(key: string): Promise<void> {
    const { sdk, client } = await this.sdk();
    await this.retry(() =>
      client.send(new sdk.DeleteObjectCommand({ Bucket: this.location.bucket, Key: this.keyPrefix + key })),
    );
  }

  private async put(
    key: string,
    bytes: Uint8Array,
    condition: { IfNoneMatch?: string; IfMatch?: string },
  ): Promise<void> {
    const { sdk, client } = await this.sdk();
    await client.send(
      new sdk.PutObjectCommand({
        Bucket: this.location.bucket,
        Key: this.keyPrefix + key,
        Body: bytes,
        ContentLength: bytes.byteLength,
        ContentType: contentType(key),
        ...condition,
      }),
    );
  }

  private retry<T>(op: () => Promise<T>): Promise<T> {
    return withRetry(op, isTransientS3Error, this.opts.retry);
  }
}

/** Throttling, 5xx, timeouts, dropped connections, and AWS's 409 for racing conditional writes. */
function isTransientS3Error(e: unknown): boolean {
  const status = statusOf(e);
  if (isRetryableStatus(status)) return true;
  const name = nameOf(e);
  if (status === 409 && name === 'ConditionalRequestConflict') return true;
  if (
    [
      'SlowDown',
      'Throttling',
      'ThrottlingException',
      'RequestTimeout',
      'RequestTimeTooSkewed',
      'TimeoutError',
      'InternalError',
      'ServiceUnavailable',
    ].includes(name)
  )
    return true;
  const code = (e as { code?: unknown } | null)?.code;
  return (
    typeof code === 'string' &&
    ['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN', 'ENOTFOUND', 'UND_ERR_SOCKET'].includes(code)
  );
}

const isNotFound = (e: unknown): boolean => statusOf(e) === 404 || ['NotFound', 'NoSuchKey'].includes(nameOf(e));
const statusOf = (e: unknown): number | undefined =>
  (e as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
const nameOf = (e: unknown): string => String((e as { name?: unknown } | null)?.name ?? '');
const contentType = (key: string): string =>
  key.endsWith('.json')
    ? 'application/json'
    : key.endsWith('.jsonl')
      ? 'application/x-ndjson'
      : 'application/octet-stream';

/** Client settings shared by the store and the Lambda's inputs reader: same region, endpoint and style. */
export function s3ClientConfig(location: S3Location, credentials?: S3ClientConfig['credentials']): S3ClientConfig {
  return {
    region: location.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1',
    ...(location.endpoint ? { endpoint: location.endpoint } : {}),
    forcePathStyle: location.forcePathStyle ?? false,
    ...(credentials ? { credentials } : {}),
    // Checksums only where S3 requires them: otherwise bodies go out aws-chunked, which S3-compatible servers may store framed.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  };
}

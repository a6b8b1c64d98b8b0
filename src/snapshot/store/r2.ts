/**
 * The R2 backend: the store over a Cloudflare Workers R2 binding (used by the serverless entry
 * points). Pure, no node:*: it runs in workerd.
 *
 * Create-only writes use `onlyIf: { etagDoesNotMatch: '*' }`, the head's compare-and-swap
 * `onlyIf: { etagMatches: <etag> }` — the object form (workerd honours it; a failed condition
 * makes `put` resolve to null). Bodies are passed with a known length (Uint8Array), as R2 needs.
 */
import type { Blob, BlobBackend, BlobHead, BlobInfo } from './blob.js';
import { ObjectStore, type ObjectStoreOptions } from './object-store.js';
import { TransientStoreError, withRetry, type RetryOptions } from './retry.js';

/** The part of the Workers `R2Bucket` type used here (structural: no @cloudflare/workers-types needed). */
export interface R2BucketLike {
  get(key: string): Promise<R2ObjectBodyLike | null>;
  head(key: string): Promise<R2ObjectLike | null>;
  put(key: string, value: ArrayBuffer | Uint8Array, options?: R2PutOptionsLike): Promise<R2ObjectLike | null>;
  list(options?: { prefix?: string; cursor?: string; limit?: number }): Promise<R2ListLike>;
  delete(key: string): Promise<void>;
}

export interface R2ObjectLike {
  readonly key: string;
  readonly etag: string;
  readonly uploaded: Date;
}

export interface R2ObjectBodyLike extends R2ObjectLike {
  arrayBuffer(): Promise<ArrayBuffer>;
}

export interface R2PutOptionsLike {
  onlyIf?: { etagMatches?: string; etagDoesNotMatch?: string };
  httpMetadata?: { contentType?: string };
}

export interface R2ListLike {
  readonly objects: readonly R2ObjectLike[];
  readonly truncated: boolean;
  readonly cursor?: string;
}

export interface R2BackendOptions {
  readonly prefix?: string;
  readonly retry?: RetryOptions;
}

export class R2Backend implements BlobBackend {
  readonly url: string;
  readonly conditional = true;
  private readonly keyPrefix: string;

  constructor(
    private readonly bucket: R2BucketLike,
    private readonly opts: R2BackendOptions = {},
  ) {
    const prefix = (opts.prefix ?? '').replace(/^\/+|\/+$/g, '');
    this.keyPrefix = prefix ? `${prefix}/` : '';
    this.url = `r2://${prefix}`;
  }

  async get(key: string): Promise<Blob | null> {
    return this.retry(async () => {
      const o = await this.bucket.get(this.keyPrefix + key);
      return o
        ? { bytes: new Uint8Array(await o.arrayBuffer()), etag: o.etag, modifiedAt: new Date(o.uploaded).getTime() }
        : null;
    });
  }

  async exists(key: string): Promise<boolean> {
    return (await this.head(key)) !== null;
  }

  async head(key: string): Promise<BlobHead | null> {
    return this.retry(async () => {
      const o = await this.bucket.head(this.keyPrefix + key);
      return o ? { etag: o.etag, modifiedAt: new Date(o.uploaded).getTime() } : null;
    });
  }

  /**
   * The binding has no copy: the same bytes are put again, only if the ETag is still the one read
   * (so a key deleted or replaced meanwhile is left alone). R2 gives the new put a new `uploaded`.
   */
  async touch(key: string): Promise<boolean> {
    return this.retry(async () => {
      const o = await this.bucket.get(this.keyPrefix + key);
      if (!o) return false;
      const bytes = new Uint8Array(await o.arrayBuffer());
      return (
        (await this.bucket.put(this.keyPrefix + key, exactBuffer(bytes), {
          onlyIf: { etagMatches: o.etag },
          httpMetadata: { contentType: contentType(key) },
        })) !== null
      );
    });
  }

  async putIfAbsent(key: string, bytes: Uint8Array): Promise<'created' | 'exists'> {
    return this.retry(async () =>
      (await this.bucket.put(this.keyPrefix + key, exactBuffer(bytes), {
        onlyIf: { etagDoesNotMatch: '*' },
        httpMetadata: { contentType: contentType(key) },
      }))
        ? 'created'
        : 'exists',
    );
  }

  async putIfMatch(key: string, bytes: Uint8Array, etag: string): Promise<'ok' | 'conflict'> {
    return this.retry(async () =>
      (await this.bucket.put(this.keyPrefix + key, exactBuffer(bytes), {
        onlyIf: { etagMatches: etag },
        httpMetadata: { contentType: contentType(key) },
      }))
        ? 'ok'
        : 'conflict',
    );
  }

  async *list(prefix: string): AsyncIterable<BlobInfo> {
    let cursor: string | undefined;
    for (;;) {
      const page = await this.retry(() =>
        this.bucket.list({ prefix: this.keyPrefix + prefix, ...(cursor ? { cursor } : {}) }),
      );
      for (const o of [...page.objects].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))) {
        yield { key: o.key.slice(this.keyPrefix.length), modifiedAt: new Date(o.uploaded).getTime() };
      }
      if (!page.truncated || !page.cursor) return;
      cursor = page.cursor;
    }
  }

  async delete(key: string): Promise<void> {
    await this.retry(() => this.bucket.delete(this.keyPrefix + key));
  }

  private retry<T>(op: () => Promise<T>): Promise<T> {
    return withRetry(op, isTransientR2Error, this.opts.retry);
  }
}

/** The SnapshotStore over an R2 binding. */
export const r2Store = (bucket: R2BucketLike, opts: R2BackendOptions & ObjectStoreOptions = {}): ObjectStore =>
  new ObjectStore(new R2Backend(bucket, opts), opts);

/**
 * R2 binding errors carry no status; its retryable ones say so in their text (internal error
 * 10001, "try again", throttling 10058) or are network failures.
 */
function isTransientR2Error(e: unknown): boolean {
  if (e instanceof TransientStoreError) return true;
  const msg = String((e as { message?: unknown } | null)?.message ?? '');
  return /\((10001|10043|10054|10058)\)|internal error|try again|timed? ?out|network connection lost|too many requests|reduce your concurrent/i.test(
    msg,
  );
}

/**
 * The bytes as an ArrayBuffer of exactly their length: R2 needs a known length, and a view into a
 * larger buffer (Node's pooled Buffers) would not survive a serialization boundary (Miniflare's proxy).
 */
function exactBuffer(bytes: Uint8Array): ArrayBuffer {
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer)
    return bytes.buffer;
  const copy = new Uint8Array(bytes.byteLength); // not bytes.slice(): on a Buffer that is a view
  copy.set(bytes);
  return copy.buffer;
}

const contentType = (key: string): string =>
  key.endsWith('.json')
    ? 'application/json'
    : key.endsWith('.jsonl')
      ? 'application/x-ndjson'
      : 'application/octet-stream';

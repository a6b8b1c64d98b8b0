/**
 * What an object-storage backend must offer for ObjectStore (object-store.ts): keyed blobs with
 * create-only writes and compare-and-swap on an ETag. S3 (s3.ts) and R2 (r2.ts) implement it;
 * both retry transient failures themselves (retry.ts), so a call that returns is final.
 */

export interface Blob {
  readonly bytes: Uint8Array;
  /** Opaque version tag for putIfMatch. */
  readonly etag: string;
  /** Last write (or touch), ms since the epoch, by the server's clock. */
  readonly modifiedAt: number;
}

export interface BlobInfo {
  readonly key: string;
  /** Last write (or touch), ms since the epoch, by the server's clock. */
  readonly modifiedAt: number;
}

export interface BlobHead {
  readonly etag: string;
  /** Last write (or touch), ms since the epoch, by the server's clock. */
  readonly modifiedAt: number;
}

export interface BlobBackend {
  /** A description for messages (`s3://bucket/prefix`). */
  readonly url: string;
  /**
   * Whether create-only and compare-and-swap writes are enforced by the server. False for test
   * servers that ignore If-None-Match/If-Match (s3rver): the store then still works for one writer.
   */
  readonly conditional: boolean;
  get(key: string): Promise<Blob | null>;
  exists(key: string): Promise<boolean>;
  /** The key's ETag and modification time, or null when absent. */
  head(key: string): Promise<BlobHead | null>;
  /**
   * Makes the key's modification time now without changing its bytes (gc's grace period counts from
   * the last reuse: see ObjectStore's freshen). False when the key is absent.
   */
  touch(key: string): Promise<boolean>;
  /** Writes only when nothing is stored under the key (If-None-Match: *). */
  putIfAbsent(key: string, bytes: Uint8Array): Promise<'created' | 'exists'>;
  /** Writes only when the stored ETag is still `etag` (If-Match); 'conflict' when it moved. */
  putIfMatch(key: string, bytes: Uint8Array, etag: string): Promise<'ok' | 'conflict'>;
  /** Every key under the prefix, in key order. */
  list(prefix: string): AsyncIterable<BlobInfo>;
  delete(key: string): Promise<void>;
}

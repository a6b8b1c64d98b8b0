/** Errors of history operations; the CLI prints their message and exits 1. */
export class HistoryError extends Error {
  override readonly name: string = 'HistoryError';
}

/** A version, tag or candidate that does not exist. */
export class VersionNotFoundError extends HistoryError {
  override readonly name = 'VersionNotFoundError';
}

/** The store backend lacks a method history needs (see the optional part of SnapshotStore). */
export class UnsupportedStoreError extends HistoryError {
  override readonly name = 'UnsupportedStoreError';
  constructor(method: string) {
    super(`this store does not support ${method} (needed for pins, tags and gc)`);
  }
}

/** Errors of history operations, with the codes of src/errors.ts; the CLI prints their message and exits 1. */
import { MeshsnapError, type ErrorCode } from '../errors.js';

/** A history operation that clashes with the channel's state (by default), or another code. */
export class HistoryError extends MeshsnapError {
  override readonly name: string = 'HistoryError';
  constructor(message: string, code: ErrorCode = 'conflict') {
    super(code, message);
  }
}

/** A version, tag or candidate that does not exist. */
export class VersionNotFoundError extends HistoryError {
  override readonly name = 'VersionNotFoundError';
  constructor(message: string) {
    super(message, 'not_found');
  }
}

/** The store backend lacks a method history needs (kept for callers; every SnapshotStore now implements history's roles). */
export class UnsupportedStoreError extends HistoryError {
  override readonly name = 'UnsupportedStoreError';
  constructor(method: string) {
    super(`this store does not support ${method} (needed for pins, tags and gc)`, 'unsupported');
  }
}

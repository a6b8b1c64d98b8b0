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

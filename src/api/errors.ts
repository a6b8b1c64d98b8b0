/**
 * The API's error contract: every failure is JSON `{ "error": { "code", "message", ... } }` with a
 * stable code. Library errors are mapped here by their `name` (not by class identity) so the map
 * works across bundles (a Worker bundle may hold a second copy of a class) and so this file does not
 * have to import every library that may throw.
 */
import type { Diagnostic } from '../model/diagnostics.js';

export type ErrorCode = 'unauthorized' | 'forbidden' | 'not_found' | 'bad_request' | 'invalid_inputs' | 'conflict' | 'internal';

export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 500;

const STATUS: Record<ErrorCode, ErrorStatus> = {
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  bad_request: 400,
  invalid_inputs: 400,
  conflict: 409,
  internal: 500,
};

export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly status: ErrorStatus;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly diagnostics?: readonly Diagnostic[],
  ) {
    super(message);
    this.status = STATUS[code];
  }
}

export interface ErrorBody {
  readonly error: { readonly code: ErrorCode; readonly message: string; readonly diagnostics?: readonly Diagnostic[] };
}

export const errorBody = (e: ApiError): ErrorBody => ({
  error: { code: e.code, message: e.message, ...(e.diagnostics ? { diagnostics: e.diagnostics } : {}) },
});

export const notFound = (message: string): ApiError => new ApiError('not_found', message);
export const badRequest = (message: string): ApiError => new ApiError('bad_request', message);

/** Error names (of library errors) that mean the caller asked for something that is not there. */
const NOT_FOUND_NAMES = new Set(['NotFoundError', 'VersionNotFoundError', 'UnknownVersionError', 'UnknownTagError', 'TagNotFoundError', 'ChannelNotFoundError', 'InvalidStoredInputsError']);
/** …that the request itself is wrong. */
const BAD_REQUEST_NAMES = new Set(['InvalidChannelError', 'InvalidDigestError', 'UsageError', 'InvalidVersionSelectorError', 'InvalidTagError', 'InvalidTagNameError', 'SelectError']);
/** …that the request is fine but clashes with the channel's state (a candidate tagged, a version without stored inputs, a race). */
const CONFLICT_NAMES = new Set(['HistoryError', 'ConflictError', 'PinnedError', 'NotPinnedError', 'AlreadyPinnedError', 'TagExistsError', 'NotACandidateError', 'HeadConflictError', 'MissingBaseError']);

/** Any thrown value as an ApiError; unknown errors become `internal` (their message is kept: it names no secret). */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const name = err instanceof Error ? err.name : '';
  const message = err instanceof Error ? err.message : String(err);
  // Libraries may tag errors with a stable code instead of a dedicated class.
  const code = err !== null && typeof err === 'object' ? (err as { code?: unknown }).code : undefined;
  if (NOT_FOUND_NAMES.has(name) || code === 'not_found') return new ApiError('not_found', message);
  if (BAD_REQUEST_NAMES.has(name) || code === 'bad_request') return new ApiError('bad_request', message);
  if (CONFLICT_NAMES.has(name) || code === 'conflict') return new ApiError('conflict', message);
  return new ApiError('internal', message);
}

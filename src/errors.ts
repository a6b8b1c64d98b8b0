/**
 * One error model for every layer (hono's HTTPException idea, without hono): an error a user may
 * see carries a stable `code` and the HTTP status that fits it. The API answers by the code, the
 * CLI prints the message; nobody maps errors by class name. Imports nothing, so the compile core,
 * the stores, the history library, the API and the functions can all throw these.
 */

/** Stable codes (the API's `error.code`) and their HTTP statuses. */
export const ERROR_STATUS = {
  /** Malformed parameters, selector, body, channel name. */
  bad_request: 400,
  /** Inputs that yield nothing to compile, or error diagnostics under `strict`. */
  invalid_inputs: 400,
  unauthorized: 401,
  forbidden: 403,
  /** An unknown channel, version, tag, candidate or route. */
  not_found: 404,
  /** A fine request that clashes with the channel's state (a candidate tagged, a race). */
  conflict: 409,
  /** The publish guard refused a snapshot that would empty or shrink the mesh (src/history/guard.ts). */
  publish_guard: 409,
  payload_too_large: 413,
  /** A fault of the server or of its store (a corrupt or missing object): never bad input. */
  internal: 500,
  /** The store lacks an operation (pins, tags, gc) the request needs. */
  unsupported: 501,
  /** The store stayed unreachable after retries. */
  unavailable: 503,
  /** Too much heavy work (compiles, diffs) already queued: try again after Retry-After. */
  busy: 503,
  /** The worker thread running a compile or diff died (over its heap limit, a crash); the server keeps serving. */
  worker_failed: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
export type ErrorStatus = (typeof ERROR_STATUS)[ErrorCode];

export class MeshsnapError extends Error {
  override readonly name: string = 'MeshsnapError';
  readonly status: ErrorStatus;
  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: { readonly cause?: unknown },
  ) {
    super(message, options);
    this.status = ERROR_STATUS[code];
  }
}

export const isErrorCode = (value: unknown): value is ErrorCode =>
  typeof value === 'string' && Object.hasOwn(ERROR_STATUS, value);

/**
 * The code of anything thrown, by its `code` field (so a second copy of this module in a bundle
 * still maps); errors without one are `internal`.
 */
export function errorCodeOf(err: unknown): ErrorCode {
  const code = err !== null && typeof err === 'object' ? (err as { code?: unknown }).code : undefined;
  return isErrorCode(code) ? code : 'internal';
}

/** True when `err` carries one of our codes (a MeshsnapError, possibly from another bundle). */
export const hasErrorCode = (err: unknown): err is Error & { readonly code: ErrorCode } =>
  err instanceof Error && isErrorCode((err as { code?: unknown }).code);

export const badRequest = (message: string): MeshsnapError => new MeshsnapError('bad_request', message);
export const notFound = (message: string): MeshsnapError => new MeshsnapError('not_found', message);
export const unauthorized = (message: string): MeshsnapError => new MeshsnapError('unauthorized', message);
export const forbidden = (message: string): MeshsnapError => new MeshsnapError('forbidden', message);
export const conflict = (message: string): MeshsnapError => new MeshsnapError('conflict', message);
export const payloadTooLarge = (maxBytes: number): MeshsnapError =>
  new MeshsnapError('payload_too_large', `request body is larger than ${maxBytes} bytes`);

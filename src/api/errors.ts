/**
 * The API's error contract: every failure is JSON `{ "error": { "code", "message", "diagnostics"? } }`
 * with the status of its code (src/errors.ts). Errors are mapped by their `code`, never by class:
 * anything without one is `internal`. A 5xx body never carries a stack or a path of the server.
 */
import { errorCodeOf, ERROR_STATUS, hasErrorCode, MeshsnapError, type ErrorCode, type ErrorStatus } from '../errors.js';
import type { Diagnostic } from '../model/diagnostics.js';

/** Inputs that give nothing to compile (or error diagnostics under `strict`): a 400 with the diagnostics. */
export class InvalidInputsError extends MeshsnapError {
  override readonly name = 'InvalidInputsError';
  constructor(
    message: string,
    readonly diagnostics: readonly Diagnostic[],
  ) {
    super('invalid_inputs', message);
  }
}

/** Heavy work refused because its queue is full: a 503 with Retry-After. */
export class BusyError extends MeshsnapError {
  override readonly name = 'BusyError';
  constructor(
    message: string,
    /** Seconds for the Retry-After header. */
    readonly retryAfter: number,
  ) {
    super('busy', message);
  }
}

/** Seconds of a Retry-After for anything thrown, when it carries one. */
export const retryAfterOf = (err: unknown): number | undefined => {
  const v = (err as { retryAfter?: unknown } | null)?.retryAfter;
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
};

export interface ErrorBody {
  readonly error: { readonly code: ErrorCode; readonly message: string; readonly diagnostics?: readonly Diagnostic[] };
}

export interface ErrorReply {
  readonly status: ErrorStatus;
  readonly body: ErrorBody;
}

const INTERNAL_MESSAGE = 'internal error (the server log has the details)';

/** Absolute file paths and URLs with a path: a 5xx message may name a store location. */
const LOCATION_RE = /(?:[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s'"`]*|(?:^|(?<=[\s'"`(=]))\/[^\s'"`]+)/g;
const redactLocations = (message: string): string => message.replace(LOCATION_RE, '<location>');

function messageOf(err: unknown, status: number): string {
  // Our own errors say what went wrong; a foreign error's text may name anything (paths, hosts).
  if (!hasErrorCode(err)) return INTERNAL_MESSAGE;
  return status >= 500 ? redactLocations(err.message) : err.message;
}

/** The response for anything thrown. */
export function errorReply(err: unknown): ErrorReply {
  const code = errorCodeOf(err);
  const status = ERROR_STATUS[code];
  const diagnostics = (err as { diagnostics?: unknown } | null)?.diagnostics;
  return {
    status,
    body: {
      error: {
        code,
        message: messageOf(err, status),
        ...(code === 'invalid_inputs' && Array.isArray(diagnostics)
          ? { diagnostics: diagnostics as Diagnostic[] }
          : {}),
      },
    },
  };
}

/** A JSON Response for anything thrown (for code outside a hono app's onError). */
export function errorResponse(err: unknown): Response {
  const { status, body } = errorReply(err);
  return new Response(JSON.stringify(body), {
    status,
    headers: {
      'content-type': 'application/json',
      ...(status === 401 ? { 'www-authenticate': 'Bearer realm="meshsnap"' } : {}),
    },
  });
}

/** kube-apiserver's `Status` object, the body of every error answer. */
import { STATUS_CODES } from 'node:http';

export function status(code: number, reason: string, message: string): Record<string, unknown> {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

/** The Status for an injected or generic failure with this HTTP code. */
export function statusFor(code: number, message?: string): Record<string, unknown> {
  const reasons: Record<number, string> = {
    404: 'NotFound',
    405: 'MethodNotAllowed',
    410: 'Gone',
    429: 'TooManyRequests',
    500: 'InternalError',
    503: 'ServiceUnavailable',
    504: 'Timeout',
  };
  return status(
    code,
    reasons[code] ?? (STATUS_CODES[code] ?? 'Unknown').replace(/\s/g, ''),
    message ?? STATUS_CODES[code] ?? 'error',
  );
}

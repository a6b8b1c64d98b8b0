/**
 * How an object that failed validation is stored: redacted to its identity and its first error,
 * never its content (a rejected object is where pasted secrets end up). Reading the redacted form
 * back (src/inputs/load.ts) reports the recorded error again, so a recompile of stored inputs, and
 * the watcher's last-known-good review, still see the object as rejected. Pure.
 */
import type { Diagnostic } from '../model/diagnostics.js';
import { get, type Raw } from './validate/reader.js';

/** The top-level key of a redacted object; no Kubernetes or Istio object has it. */
export const REJECTED_KEY = 'meshsnap.dev/rejected';

export interface Rejection {
  readonly code: string;
  readonly field?: string;
  readonly message: string;
}

const MAX_MESSAGE = 200;

/** A message without the values it quotes: every "…" quoted part becomes "…", and it is capped in length. */
export function redactMessage(message: string): string {
  const redacted = message.replace(/"(?:[^"\\]|\\.)*"?/g, '"…"');
  return redacted.length > MAX_MESSAGE ? `${redacted.slice(0, MAX_MESSAGE)}…` : redacted;
}

/** The stored form of a rejected object: apiVersion, kind, namespace/name and its first error, redacted. */
export function redactRejected(raw: Raw, error: Diagnostic): Record<string, unknown> {
  const meta = get(raw, 'metadata');
  const m = meta !== null && typeof meta === 'object' && !Array.isArray(meta) ? (meta as Raw) : {};
  const name = get(m, 'name');
  const namespace = get(m, 'namespace');
  const apiVersion = get(raw, 'apiVersion');
  const rejection: Rejection = {
    code: error.code,
    ...(error.field !== undefined ? { field: error.field } : {}),
    message: redactMessage(error.message),
  };
  return {
    ...(typeof apiVersion === 'string' ? { apiVersion } : {}),
    kind: get(raw, 'kind'),
    metadata: { name, ...(typeof namespace === 'string' ? { namespace } : {}) },
    [REJECTED_KEY]: rejection,
  };
}

/** The recorded error of a redacted object, or undefined for any other object. */
export function redactedRejection(raw: Raw): Rejection | undefined {
  const r = get(raw, REJECTED_KEY);
  if (r === null || typeof r !== 'object' || Array.isArray(r)) return undefined;
  const code = get(r as Raw, 'code');
  const field = get(r as Raw, 'field');
  const message = get(r as Raw, 'message');
  if (typeof code !== 'string' || typeof message !== 'string') return undefined;
  return { code, ...(typeof field === 'string' ? { field } : {}), message: redactMessage(message) };
}

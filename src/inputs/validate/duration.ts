/**
 * Istio duration strings ("1s", "0.5s", "100ms", "1m", "1h", "1m30s") → milliseconds.
 * Istio's YAML takes protobuf Durations, which people also write in Go's duration syntax; both are
 * accepted. Negative durations are rejected.
 */
import { type Reader } from './reader.js';

const UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};
const PART = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/y;

/** Milliseconds, or undefined when `text` is not a duration. */
export function parseDurationMs(text: string): number | undefined {
  if (text === '' || text.length > 64) return undefined;
  let total = 0;
  PART.lastIndex = 0;
  while (PART.lastIndex < text.length) {
    const m = PART.exec(text);
    if (!m) return undefined;
    total += Number(m[1]) * (UNIT_MS[m[2] ?? ''] ?? NaN);
  }
  if (!Number.isFinite(total)) return undefined;
  // Nanosecond precision, without float noise such as 0.30000000000000004.
  return Math.round(total * 1e6) / 1e6;
}

export function duration(r: Reader, v: unknown, path: string): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') {
    r.error(path, `must be a duration string such as "1s" or "100ms"`);
    return undefined;
  }
  const ms = parseDurationMs(v);
  if (ms === undefined)
    r.error(path, `"${v.slice(0, 40)}" is not a duration (examples: "1s", "0.5s", "100ms", "1m", "1h")`);
  return ms;
}

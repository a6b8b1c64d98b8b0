/**
 * JSON with object keys sorted, used to order objects by content (duplicate resolution).
 * Depth-limited so a hostile document that bypassed the parser's depth check cannot blow the stack.
 */
const MAX_DEPTH = 100;

export function stableStringify(value: unknown, depth = 0): string {
  if (depth > MAX_DEPTH) return '"…"';
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => stableStringify(v, depth + 1)).join(',')}]`;
  const o = value as Record<string, unknown>;
  const parts = Object.keys(o)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${stableStringify(o[k], depth + 1)}`);
  return `{${parts.join(',')}}`;
}

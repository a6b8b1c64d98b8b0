/**
 * Canonical JSON: object keys sorted (by UTF-16 code units), no whitespace. Equal values always
 * give equal text, so the text can be hashed (snapshot documents, stored inputs) or compared
 * (duplicate documents). A leaf: every layer may import it.
 *
 * Never throws on user data, and writes what JSON.stringify would: `undefined`, function and
 * symbol members are left out (`null` in arrays), non-finite numbers (YAML `.nan`, `.inf`) become
 * `null`. A bigint is written as its digits.
 */
export function canonicalJson(value: unknown): string {
  return jsonText(value) ?? 'null';
}

/** Undefined for a value JSON has no text for (undefined, a function, a symbol). */
function jsonText(v: unknown): string | undefined {
  switch (typeof v) {
    case 'string':
      return JSON.stringify(v);
    case 'number':
      return Number.isFinite(v) ? JSON.stringify(v) : 'null';
    case 'boolean':
      return v ? 'true' : 'false';
    case 'bigint':
      return v.toString();
    case 'object': {
      if (v === null) return 'null';
      if (Array.isArray(v)) return `[${v.map((x) => jsonText(x) ?? 'null').join(',')}]`;
      const o = v as Record<string, unknown>;
      const parts: string[] = [];
      for (const k of Object.keys(o).sort()) {
        const x = jsonText(o[k]);
        if (x !== undefined) parts.push(`${JSON.stringify(k)}:${x}`);
      }
      return `{${parts.join(',')}}`;
    }
    default:
      return undefined;
  }
}

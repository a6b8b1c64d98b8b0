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
      // A finite number's JSON text is its String() text (-0 included: "0").
      return Number.isFinite(v) ? String(v) : 'null';
    case 'boolean':
      return v ? 'true' : 'false';
    case 'bigint':
      return v.toString();
    case 'object': {
      if (v === null) return 'null';
      // Built by concatenation (no per-member arrays): this runs over every stored object.
      if (Array.isArray(v)) {
        let text = '[';
        for (let i = 0; i < v.length; i++) {
          if (i > 0) text += ',';
          const x: unknown = v[i];
          // A hole gives nothing between its commas, as Array.prototype.map + join always wrote it.
          if (x !== undefined || i in v) text += jsonText(x) ?? 'null';
        }
        return text + ']';
      }
      const o = v as Record<string, unknown>;
      const keys = sortedKeys(Object.keys(o));
      let text = '{';
      let first = true;
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i] as string;
        const x = jsonText(o[k]);
        if (x === undefined) continue;
        text += first ? quotedKey(k) + ':' + x : ',' + quotedKey(k) + ':' + x;
        first = false;
      }
      return text + '}';
    }
    default:
      return undefined;
  }
}

/**
 * Keys repeat across objects (`metadata`, `name`, `ports`…): their JSON text is made once. The
 * cache is capped, so keys from user data (labels) cannot grow it without bound.
 */
const KEY_CACHE_MAX = 4096;
const quotedKeys = new Map<string, string>();

function quotedKey(k: string): string {
  let q = quotedKeys.get(k);
  if (q === undefined) {
    q = JSON.stringify(k);
    if (quotedKeys.size < KEY_CACHE_MAX) quotedKeys.set(k, q);
  }
  return q;
}

/**
 * The keys in UTF-16 code unit order, as `sort()` orders them, sorted in place. Insertion sort for
 * the few keys of most objects: `Array.prototype.sort` copies into a work array first, garbage on
 * every object of every stored input.
 */
function sortedKeys(keys: string[]): string[] {
  if (keys.length > 32) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const k = keys[i] as string;
    let j = i - 1;
    while (j >= 0 && (keys[j] as string) > k) {
      keys[j + 1] = keys[j] as string;
      j--;
    }
    keys[j + 1] = k;
  }
  return keys;
}

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
export function sortedKeys(keys: string[]): string[] {
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

/**
 * `canonicalJson(value)` as UTF-8 bytes, written in one pass into a reused buffer: no intermediate
 * strings (the text form builds one string per member, ~10× the output in garbage), one copy out.
 * Byte for byte the UTF-8 encoding of `canonicalJson(value)` (test/canonical-json.test.ts).
 */
export function canonicalJsonBytes(value: unknown): Uint8Array {
  // Re-entered only if a getter in `value` called it: such a call gets a buffer of its own.
  const w = writing ? new ByteWriter(new Uint8Array(256)) : shared;
  writing = true;
  try {
    w.pos = 0;
    if (!w.value(value)) w.ascii('null');
    return w.buf.slice(0, w.pos);
  } finally {
    if (w === shared) {
      writing = false;
      // One huge value must not keep a huge buffer alive.
      if (shared.buf.length > MAX_KEPT_BUFFER) shared.buf = new Uint8Array(INITIAL_BUFFER);
    }
  }
}

const utf8 = new TextEncoder();
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Node's native Latin-1 writer (looked up, not imported: this module also runs where there is no
 * Buffer). It takes any Uint8Array, and copies a string of printable ASCII as it is, several times
 * faster than a loop over its code units for the names, IPs and digests written here.
 */
const latin1Write = (
  globalThis as { Buffer?: { prototype: { latin1Write?: (s: string, offset: number, length: number) => number } } }
).Buffer?.prototype.latin1Write;
/** Shorter strings are copied by the loop (the call costs more than it saves). */
const NATIVE_FROM = 16;
/** Printable ASCII but `"` and `\`: what JSON.stringify writes as it is. */
const PLAIN_TEXT = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** JSON text written as UTF-8 bytes into a growing buffer (canonical JSON here, the snapshot tree's leaves in tree.ts). */
export class ByteWriter {
  pos = 0;
  constructor(public buf: Uint8Array) {}

  private room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const grown = new Uint8Array(Math.max(this.buf.length * 2, this.pos + n));
    grown.set(this.buf.subarray(0, this.pos));
    this.buf = grown;
  }

  byte(b: number): void {
    this.room(1);
    this.buf[this.pos++] = b;
  }

  /** Bytes as they are (short ones: a loop beats `set`). */
  bytes(b: Uint8Array): void {
    this.room(b.length);
    const buf = this.buf;
    let pos = this.pos;
    for (let i = 0; i < b.length; i++) buf[pos++] = b[i] as number;
    this.pos = pos;
  }

  /** Text known to be ASCII (numbers, literals). */
  ascii(s: string): void {
    this.room(s.length);
    for (let i = 0; i < s.length; i++) this.buf[this.pos++] = s.charCodeAt(i);
  }

  /** JSON.stringify(s) as UTF-8: printable ASCII needs no escape and is copied as it is; anything else goes through JSON.stringify. */
  string(s: string): void {
    const start = this.pos;
    this.room(s.length + 2);
    const buf = this.buf;
    let pos = start;
    if (s.length >= NATIVE_FROM && latin1Write !== undefined && PLAIN_TEXT.test(s)) {
      buf[pos++] = QUOTE;
      pos += latin1Write.call(buf, s, pos, s.length);
      buf[pos++] = QUOTE;
      this.pos = pos;
      return;
    }
    buf[pos++] = QUOTE;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x20 || c > 0x7e || c === QUOTE || c === BACKSLASH) {
        this.pos = start;
        return this.text(JSON.stringify(s));
      }
      buf[pos++] = c;
    }
    buf[pos++] = QUOTE;
    this.pos = pos;
  }

  /** Well-formed text (JSON.stringify's output has no lone surrogate) as UTF-8: at most 3 bytes per UTF-16 unit. */
  private text(t: string): void {
    this.room(3 * t.length);
    this.pos += utf8.encodeInto(t, this.buf.subarray(this.pos)).written;
  }

  /** Writes what `jsonText` gives; false (nothing written) where it gives undefined. */
  value(v: unknown): boolean {
    switch (typeof v) {
      case 'string':
        this.string(v);
        return true;
      case 'number':
        this.ascii(Number.isFinite(v) ? String(v) : 'null');
        return true;
      case 'boolean':
        this.ascii(v ? 'true' : 'false');
        return true;
      case 'bigint':
        this.ascii(v.toString());
        return true;
      case 'object': {
        if (v === null) this.ascii('null');
        else if (Array.isArray(v)) this.array(v);
        else this.object(v as Record<string, unknown>);
        return true;
      }
      default:
        return false;
    }
  }

  private array(v: readonly unknown[]): void {
    this.byte(0x5b);
    for (let i = 0; i < v.length; i++) {
      if (i > 0) this.byte(0x2c);
      const x: unknown = v[i];
      // A hole gives nothing between its commas, as in `jsonText`.
      if ((x !== undefined || i in v) && !this.value(x)) this.ascii('null');
    }
    this.byte(0x5d);
  }

  private object(o: Record<string, unknown>): void {
    const keys = sortedKeys(Object.keys(o));
    this.byte(0x7b);
    let first = true;
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i] as string;
      const x = o[k];
      // Members JSON has no text for are left out (undefined, functions, symbols).
      if (x === undefined || typeof x === 'function' || typeof x === 'symbol') continue;
      if (!first) this.byte(0x2c);
      first = false;
      this.string(k);
      this.byte(0x3a);
      this.value(x);
    }
    this.byte(0x7d);
  }
}

const INITIAL_BUFFER = 1 << 16;
const MAX_KEPT_BUFFER = 1 << 20;
let writing = false;
const shared = new ByteWriter(new Uint8Array(INITIAL_BUFFER));

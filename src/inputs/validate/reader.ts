/**
 * Typed field readers for raw documents. Every reader takes the raw value and its field path,
 * returns the typed value or `undefined`, and reports what is wrong on the object's `Reader`
 * (which remembers that the object failed). `null` counts as absent, as in Kubernetes.
 */
import { sortedKeys } from '../../canonical-json.js';
import type { Diagnostic } from '../../model/diagnostics.js';
import { INPUT_LIMITS, TOO_LARGE } from '../limits.js';
import { setMember } from '../plain-object.js';

export interface ObjectId {
  readonly kind?: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly file?: string;
  readonly index?: number;
}

export type Raw = Readonly<Record<string, unknown>>;

export class Reader {
  /** True once any error was reported: the object must be skipped. */
  failed = false;
  /** Errors reported so far, to skip checks that would only repeat an earlier error. */
  errorCount = 0;

  constructor(
    public id: ObjectId,
    private readonly out: Diagnostic[],
  ) {}

  error(field: string, message: string, code = 'invalid-field'): void {
    this.failed = true;
    this.errorCount++;
    this.out.push({ severity: 'error', code, message: withoutKeyMaterial(message), ...this.where(field) });
  }

  warn(field: string, message: string, code: string): void {
    this.out.push({ severity: 'warning', code, message: withoutKeyMaterial(message), ...this.where(field) });
  }

  info(field: string, message: string, code: string): void {
    this.out.push({ severity: 'info', code, message: withoutKeyMaterial(message), ...this.where(field) });
  }

  private where(field: string): Omit<Diagnostic, 'severity' | 'code' | 'message'> {
    const { kind, namespace, name, file, index } = this.id;
    return {
      ...(kind !== undefined ? { kind } : {}),
      ...(namespace !== undefined ? { namespace } : {}),
      ...(name !== undefined ? { name } : {}),
      ...(field !== '' ? { field } : {}),
      ...(file !== undefined ? { file } : {}),
      ...(index !== undefined ? { index } : {}),
    };
  }
}

/** A message that quotes a value holding PEM material (a key pasted in the wrong field) is cut before it. */
function withoutKeyMaterial(message: string): string {
  const at = message.indexOf('-----BEGIN');
  return at < 0 ? message : `${message.slice(0, at)}… (key or certificate material not shown)`;
}

/**
 * Told of the members a reader reads (src/inputs/read-recorder.ts records them to store only what
 * is read). Validators of kinds read under a recorder read raw members only through `get`, `list`
 * and `mapOf`; the other kinds are read through a tracking view (src/inputs/read-tracker.ts).
 */
export interface MemberReads {
  /** An own member of `obj` was read. */
  read(obj: object, key: string): void;
  /** Every element of `items` was read. */
  readAll(items: readonly unknown[]): void;
}

let recording: MemberReads | undefined;

/** Reads from now on are told to `reads` (undefined: to nobody). One document at a time, synchronously. */
export function recordReads(reads: MemberReads | undefined): void {
  recording = reads;
}

/** An own property (never one inherited from Object.prototype). */
export function get(obj: Raw, key: string): unknown {
  if (!Object.hasOwn(obj, key)) return undefined;
  recording?.read(obj, key);
  return obj[key];
}

export const join = (path: string, key: string): string => (path === '' ? key : `${path}.${key}`);

function describe(v: unknown): string {
  if (Array.isArray(v)) return 'a list';
  if (v === null) return 'null';
  return typeof v === 'object' ? 'an object' : `${typeof v} ${JSON.stringify(v)?.slice(0, 40) ?? ''}`.trim();
}

export function obj(r: Reader, v: unknown, path: string): Raw | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) {
    r.error(path, `must be an object, got ${describe(v)}`);
    return undefined;
  }
  return v as Raw;
}

/** Reads an object and warns (code `unknown-field`) about keys outside `known`. */
export function fields(r: Reader, v: unknown, path: string, known: readonly string[]): Raw | undefined {
  const o = obj(r, v, path);
  if (o) {
    for (const key of sortedKeys(Object.keys(o))) {
      if (!known.includes(key)) r.warn(join(path, key), `unknown field "${key}" is ignored`, 'unknown-field');
    }
  }
  return o;
}

export function str(r: Reader, v: unknown, path: string): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') {
    r.error(path, `must be a string, got ${describe(v)}`);
    return undefined;
  }
  return v;
}

/** A string that must be present and non-empty. */
export function requiredStr(r: Reader, v: unknown, path: string): string | undefined {
  const s = str(r, v, path);
  if (s === undefined && (v === undefined || v === null)) r.error(path, 'is required', 'missing-field');
  else if (s === '') r.error(path, 'must not be empty', 'missing-field');
  return s === '' ? undefined : s;
}

export function bool(r: Reader, v: unknown, path: string): boolean | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') {
    r.error(path, `must be true or false, got ${describe(v)}`);
    return undefined;
  }
  return v;
}

export function num(r: Reader, v: unknown, path: string, min = -Infinity, max = Infinity): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) {
    r.error(path, `must be a number, got ${describe(v)}`);
    return undefined;
  }
  if (v < min || v > max) {
    r.error(path, `must be between ${min} and ${max}, got ${v}`);
    return undefined;
  }
  return v;
}

export function int(r: Reader, v: unknown, path: string, min = 0, max = 2 ** 32 - 1): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v)) {
    r.error(path, `must be an integer, got ${describe(v)}`);
    return undefined;
  }
  return num(r, v, path, min, max);
}

export function port(r: Reader, v: unknown, path: string): number | undefined {
  return int(r, v, path, 1, 65535);
}

/**
 * A list; `each` reads one item (path `path[i]`) and returns undefined to drop it. A list longer
 * than `max` (src/inputs/limits.ts) is refused before any item is read.
 */
export function list<T>(
  r: Reader,
  v: unknown,
  path: string,
  each: (item: unknown, path: string) => T | undefined,
  max: number = INPUT_LIMITS.maxListItems,
): T[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) {
    r.error(path, `must be a list, got ${describe(v)}`);
    return undefined;
  }
  if (v.length > max) {
    r.error(path, `has ${v.length} items; at most ${max} are accepted`, TOO_LARGE);
    return undefined;
  }
  recording?.readAll(v);
  // Sized up front: the InputSet keeps these lists, and one grown by push keeps room for 17 items
  // (most lists here hold one to three: ports, addresses, endpoints).
  const out = new Array<T>(v.length);
  let n = 0;
  for (let i = 0; i < v.length; i++) {
    const t = each(v[i], `${path}[${i}]`);
    if (t !== undefined) out[n++] = t;
  }
  if (n < out.length) out.length = n;
  return out;
}

export function strList(r: Reader, v: unknown, path: string, max?: number): string[] | undefined {
  return list(
    r,
    v,
    path,
    (item, p) => {
      if (typeof item === 'string') return item;
      r.error(p, `must be a string, got ${describe(item)}`);
      return undefined;
    },
    max,
  );
}

/** A map of string values, with keys sorted (protobuf maps keep insertion order). */
export function strMap(r: Reader, v: unknown, path: string): Record<string, string> | undefined {
  const o = obj(r, v, path);
  if (!o) return undefined;
  // mapOf without a path string per key (labels: every object has some).
  const out: Record<string, string> = {};
  for (const key of sortedKeys(Object.keys(o))) {
    const item = get(o, key);
    if (typeof item === 'string') setMember(out, key, item);
    else r.error(join(path, key), `must be a string, got ${describe(item)}`);
  }
  return out;
}

/** A map whose values are read by `each`; keys sorted. A `__proto__` key stays a plain key. */
export function mapOf<T>(
  r: Reader,
  v: unknown,
  path: string,
  each: (item: unknown, path: string) => T | undefined,
): Record<string, T> | undefined {
  const o = obj(r, v, path);
  if (!o) return undefined;
  const out: Record<string, T> = {};
  for (const key of sortedKeys(Object.keys(o))) {
    const t = each(get(o, key), join(path, key));
    if (t !== undefined) setMember(out, key, t);
  }
  return out;
}

/** Drops undefined properties so objects compare equal whatever was written. */
export function compact<T extends object>(o: T): T {
  const src = o as Record<string, unknown>;
  let undef = false;
  for (const k in src) if (src[k] === undefined) undef = true;
  if (!undef) return o;
  const out: Record<string, unknown> = {};
  for (const k in src) if (src[k] !== undefined) out[k] = src[k];
  return out as T;
}

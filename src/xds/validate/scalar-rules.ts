/**
 * protoc-gen-validate's scalar rules as checks: each rule body of the table becomes one function
 * `(value) => problem | undefined`, built once per field, so the walk only calls closures. Messages
 * and semantics follow validate.proto (and PGV's Go/C++ templates): string lengths count code points,
 * `*_bytes` count UTF-8 bytes, `pattern` is RE2 with find semantics, a range whose bounds are
 * swapped (`gt: 10, lt: 5`) is an exclusive one.
 */
import { RE2JS } from 're2js';
import type {
  BytesRules,
  DurationRules,
  EnumRules,
  NumberLike,
  NumberRules,
  StringRules,
  TimeBound,
  TimestampRules,
} from './rule-table.js';

/** A violated rule: `rule` as written in the proto (`string.min_len`), and why. */
export interface RuleProblem {
  readonly rule: string;
  readonly message: string;
}

export type ValueCheck = (value: unknown) => RuleProblem | undefined;

const problem = (rule: string, message: string): RuleProblem => ({ rule, message });

/** Numbers of the proto: JS numbers, protobufjs `Long`s and decimal strings (64-bit). */
export function toNumber(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string') return Number(v);
  if (v && typeof v === 'object') {
    const long = v as { toNumber?: () => number };
    if (typeof long.toNumber === 'function') return long.toNumber();
  }
  return v === undefined || v === null ? 0 : Number(v);
}

const num = (v: NumberLike): number => Number(v);

/** The checks of one rule body, run in order; the first problem wins (one report per field and rule body). */
function all(checks: readonly ValueCheck[]): ValueCheck | undefined {
  if (checks.length === 0) return undefined;
  if (checks.length === 1) return checks[0];
  return (v) => {
    for (const c of checks) {
      const p = c(v);
      if (p) return p;
    }
    return undefined;
  };
}

/** gt/gte/lt/lte as PGV reads them, on any ordered value mapped to a number-like key. */
function rangeCheck<T>(
  kind: string,
  r: { gt?: T; gte?: T; lt?: T; lte?: T },
  cmp: (a: T, b: T) => number,
  show: (b: T) => string,
): ((v: T) => RuleProblem | undefined) | undefined {
  const lower =
    r.gt !== undefined ? { b: r.gt, excl: true } : r.gte !== undefined ? { b: r.gte, excl: false } : undefined;
  const upper =
    r.lt !== undefined ? { b: r.lt, excl: true } : r.lte !== undefined ? { b: r.lte, excl: false } : undefined;
  if (!lower && !upper) return undefined;
  const above = (v: T): boolean => !lower || (lower.excl ? cmp(v, lower.b) > 0 : cmp(v, lower.b) >= 0);
  const below = (v: T): boolean => !upper || (upper.excl ? cmp(v, upper.b) < 0 : cmp(v, upper.b) <= 0);
  const lowName = lower ? `${kind}.${lower.excl ? 'gt' : 'gte'}` : '';
  const upName = upper ? `${kind}.${upper.excl ? 'lt' : 'lte'}` : '';
  const lowText = lower ? `${lower.excl ? '>' : '≥'} ${show(lower.b)}` : '';
  const upText = upper ? `${upper.excl ? '<' : '≤'} ${show(upper.b)}` : '';
  if (lower && upper && cmp(upper.b, lower.b) < 0) {
    // An exclusive range: the value must lie outside [upper, lower].
    return (v) =>
      above(v) || below(v) ? undefined : problem(`${lowName}+${upName}`, `must be ${lowText} or ${upText}`);
  }
  return (v) => {
    if (!above(v)) return problem(lowName, `must be ${lowText}${upper ? ` and ${upText}` : ''}`);
    if (!below(v)) return problem(upName, `must be ${upText}${lower ? ` and ${lowText}` : ''}`);
    return undefined;
  };
}

const numberCompare = (a: number, b: number): number => a - b;

export function numberCheck(kind: string, r: NumberRules): ValueCheck | undefined {
  const checks: ((n: number) => RuleProblem | undefined)[] = [];
  if (r.const !== undefined) {
    const c = num(r.const);
    checks.push((n) => (n === c ? undefined : problem(`${kind}.const`, `must equal ${c}`)));
  }
  const range = rangeCheck<number>(
    kind,
    {
      gt: r.gt === undefined ? undefined : num(r.gt),
      gte: r.gte === undefined ? undefined : num(r.gte),
      lt: r.lt === undefined ? undefined : num(r.lt),
      lte: r.lte === undefined ? undefined : num(r.lte),
    },
    numberCompare,
    String,
  );
  if (range) checks.push(range);
  if (r.in) {
    const set = new Set(r.in.map(num));
    checks.push((n) => (set.has(n) ? undefined : problem(`${kind}.in`, `must be one of ${[...set].join(', ')}`)));
  }
  if (r.not_in) {
    const set = new Set(r.not_in.map(num));
    checks.push((n) =>
      set.has(n) ? problem(`${kind}.not_in`, `must not be one of ${[...set].join(', ')}`) : undefined,
    );
  }
  if (checks.length === 0) return undefined;
  const ignoreEmpty = r.ignore_empty === true;
  return (v) => {
    const n = toNumber(v);
    if (ignoreEmpty && n === 0) return undefined;
    for (const c of checks) {
      const p = c(n);
      if (p) return p;
    }
    return undefined;
  };
}

export function boolCheck(r: { readonly const?: boolean }): ValueCheck | undefined {
  if (r.const === undefined) return undefined;
  const c = r.const;
  return (v) => ((v === true) === c ? undefined : problem('bool.const', `must be ${c}`));
}

/** Code points of a string (what PGV's `min_len`/`max_len` count). */
export function runeLength(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/**
 * PGV's well-known header regexes (validate.proto `KnownRegex`, as PGV's templates spell them).
 * `+-.` in the name class is a range (`+`, `,`, `-`, `.`), in PGV too. `strict: false` only refuses
 * NUL, LF and CR. They are plain character classes: JavaScript and RE2 read them alike.
 */
/* eslint-disable no-control-regex -- the point of these patterns is to refuse control characters */
export const WELL_KNOWN_REGEX = {
  HTTP_HEADER_NAME: /^:?[0-9a-zA-Z!#$%&'*+-.^_|~`]+$/,
  HTTP_HEADER_VALUE: /^[^\u0000-\u0008\u000A-\u001F\u007F]*$/,
  HEADER_STRING: /^[^\u0000\u000A\u000D]*$/,
} as const;
/* eslint-enable no-control-regex */

const re2Cache = new Map<string, RE2JS>();
/** An RE2 pattern of the protos, compiled once. */
function re2(pattern: string): RE2JS {
  let re = re2Cache.get(pattern);
  if (!re) re2Cache.set(pattern, (re = RE2JS.compile(pattern)));
  return re;
}

export function stringCheck(r: StringRules): ValueCheck | undefined {
  const checks: ((s: string) => RuleProblem | undefined)[] = [];
  const k = 'string';
  if (r.const !== undefined) {
    const c = r.const;
    checks.push((s) => (s === c ? undefined : problem(`${k}.const`, `must equal ${JSON.stringify(c)}`)));
  }
  if (r.len !== undefined) {
    const n = num(r.len);
    checks.push((s) => (runeLength(s) === n ? undefined : problem(`${k}.len`, `must be ${n} characters long`)));
  }
  if (r.min_len !== undefined) {
    const n = num(r.min_len);
    // s.length ≥ code points: a long enough string needs no count.
    checks.push((s) =>
      s.length >= n * 2 || runeLength(s) >= n
        ? undefined
        : problem(`${k}.min_len`, `must be at least ${n} characters long`),
    );
  }
  if (r.max_len !== undefined) {
    const n = num(r.max_len);
    checks.push((s) =>
      s.length <= n || runeLength(s) <= n ? undefined : problem(`${k}.max_len`, `must be at most ${n} characters long`),
    );
  }
  if (r.len_bytes !== undefined) {
    const n = num(r.len_bytes);
    checks.push((s) => (utf8Length(s) === n ? undefined : problem(`${k}.len_bytes`, `must be ${n} bytes long`)));
  }
  if (r.min_bytes !== undefined) {
    const n = num(r.min_bytes);
    checks.push((s) =>
      s.length >= n || utf8Length(s) >= n ? undefined : problem(`${k}.min_bytes`, `must be at least ${n} bytes long`),
    );
  }
  if (r.max_bytes !== undefined) {
    const n = num(r.max_bytes);
    checks.push((s) =>
      s.length * 3 <= n || utf8Length(s) <= n
        ? undefined
        : problem(`${k}.max_bytes`, `must be at most ${n} bytes long`),
    );
  }
  if (r.pattern !== undefined) {
    const pattern = r.pattern;
    checks.push((s) =>
      re2(pattern).matcher(s).find()
        ? undefined
        : problem(`${k}.pattern`, `must match the RE2 pattern ${JSON.stringify(pattern)}`),
    );
  }
  if (r.prefix !== undefined) {
    const x = r.prefix;
    checks.push((s) => (s.startsWith(x) ? undefined : problem(`${k}.prefix`, `must start with ${JSON.stringify(x)}`)));
  }
  if (r.suffix !== undefined) {
    const x = r.suffix;
    checks.push((s) => (s.endsWith(x) ? undefined : problem(`${k}.suffix`, `must end with ${JSON.stringify(x)}`)));
  }
  if (r.contains !== undefined) {
    const x = r.contains;
    checks.push((s) => (s.includes(x) ? undefined : problem(`${k}.contains`, `must contain ${JSON.stringify(x)}`)));
  }
  if (r.not_contains !== undefined) {
    const x = r.not_contains;
    checks.push((s) =>
      s.includes(x) ? problem(`${k}.not_contains`, `must not contain ${JSON.stringify(x)}`) : undefined,
    );
  }
  if (r.in) {
    const set = new Set(r.in);
    checks.push((s) => (set.has(s) ? undefined : problem(`${k}.in`, `must be one of ${JSON.stringify([...set])}`)));
  }
  if (r.not_in) {
    const set = new Set(r.not_in);
    checks.push((s) =>
      set.has(s) ? problem(`${k}.not_in`, `must not be one of ${JSON.stringify([...set])}`) : undefined,
    );
  }
  if (r.well_known_regex === 'HTTP_HEADER_NAME' || r.well_known_regex === 'HTTP_HEADER_VALUE') {
    const which = r.well_known_regex;
    const strict = r.strict !== false;
    const re = strict ? WELL_KNOWN_REGEX[which] : WELL_KNOWN_REGEX.HEADER_STRING;
    const text = strict
      ? `a valid ${which === 'HTTP_HEADER_NAME' ? 'HTTP header name' : 'HTTP header value'} (RFC 7230)`
      : 'free of NUL, CR and LF';
    checks.push((s) => (re.test(s) ? undefined : problem(`${k}.well_known_regex`, `must be ${text}`)));
  }
  if (checks.length === 0) return undefined;
  const ignoreEmpty = r.ignore_empty === true;
  return (v) => {
    const s = typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v);
    if (ignoreEmpty && s === '') return undefined;
    for (const c of checks) {
      const p = c(s);
      if (p) return p;
    }
    return undefined;
  };
}

/** Bytes as a binary string (one char per byte), to compare with the rule's literals. */
const binary = (b: Uint8Array): string => {
  let s = '';
  for (const x of b) s += String.fromCharCode(x);
  return s;
};

export function bytesCheck(r: BytesRules): ValueCheck | undefined {
  const k = 'bytes';
  const checks: ((b: Uint8Array) => RuleProblem | undefined)[] = [];
  if (r.len !== undefined) {
    const n = num(r.len);
    checks.push((b) => (b.length === n ? undefined : problem(`${k}.len`, `must be ${n} bytes long`)));
  }
  if (r.min_len !== undefined) {
    const n = num(r.min_len);
    checks.push((b) => (b.length >= n ? undefined : problem(`${k}.min_len`, `must be at least ${n} bytes long`)));
  }
  if (r.max_len !== undefined) {
    const n = num(r.max_len);
    checks.push((b) => (b.length <= n ? undefined : problem(`${k}.max_len`, `must be at most ${n} bytes long`)));
  }
  const textual: [keyof BytesRules, (s: string, x: string) => boolean, string][] = [
    ['const', (s, x) => s === x, 'must equal'],
    ['prefix', (s, x) => s.startsWith(x), 'must start with'],
    ['suffix', (s, x) => s.endsWith(x), 'must end with'],
    ['contains', (s, x) => s.includes(x), 'must contain'],
  ];
  for (const [key, ok, text] of textual) {
    const x = r[key];
    if (typeof x === 'string')
      checks.push((b) => (ok(binary(b), x) ? undefined : problem(`${k}.${key}`, `${text} ${JSON.stringify(x)}`)));
  }
  if (r.in) {
    const set = new Set(r.in);
    checks.push((b) => (set.has(binary(b)) ? undefined : problem(`${k}.in`, 'must be one of the listed values')));
  }
  if (r.not_in) {
    const set = new Set(r.not_in);
    checks.push((b) =>
      set.has(binary(b)) ? problem(`${k}.not_in`, 'must not be one of the listed values') : undefined,
    );
  }
  if (checks.length === 0) return undefined;
  const ignoreEmpty = r.ignore_empty === true;
  return (v) => {
    const b = v instanceof Uint8Array ? v : new Uint8Array(0);
    if (ignoreEmpty && b.length === 0) return undefined;
    for (const c of checks) {
      const p = c(b);
      if (p) return p;
    }
    return undefined;
  };
}

/** Enum rules; `values` are the enum's (name → number), for `defined_only` and for values given by name. */
export function enumCheck(r: EnumRules, values: Readonly<Record<string, number>>): ValueCheck | undefined {
  const k = 'enum';
  const checks: ((n: number) => RuleProblem | undefined)[] = [];
  if (r.const !== undefined) {
    const c = r.const;
    checks.push((n) => (n === c ? undefined : problem(`${k}.const`, `must be ${c}`)));
  }
  if (r.defined_only) {
    const defined = new Set(Object.values(values));
    checks.push((n) => (defined.has(n) ? undefined : problem(`${k}.defined_only`, `${n} is not a value of the enum`)));
  }
  if (r.in) {
    const set = new Set(r.in);
    checks.push((n) => (set.has(n) ? undefined : problem(`${k}.in`, `must be one of ${[...set].join(', ')}`)));
  }
  if (r.not_in) {
    const set = new Set(r.not_in);
    checks.push((n) => (set.has(n) ? problem(`${k}.not_in`, `must not be ${n}`) : undefined));
  }
  if (checks.length === 0) return undefined;
  return (v) => {
    const n = typeof v === 'string' ? (values[v] ?? Number.NaN) : toNumber(v);
    for (const c of checks) {
      const p = c(n);
      if (p) return p;
    }
    return undefined;
  };
}

/** A Duration or Timestamp as [seconds, nanos]. */
type Time = readonly [number, number];
const timeOf = (v: unknown): Time => {
  const t = (v ?? {}) as { seconds?: unknown; nanos?: unknown };
  return [toNumber(t.seconds), toNumber(t.nanos)];
};
const boundOf = (b: TimeBound): Time => [toNumber(b.seconds), b.nanos ?? 0];
const timeCompare = (a: Time, b: Time): number => (a[0] !== b[0] ? a[0] - b[0] : a[1] - b[1]);
const showTime = (t: Time): string => `${t[0] + t[1] / 1e9}s`;

/** Duration and Timestamp rules on a present value (`required` is checked by the walker). */
export function timeCheck(kind: 'duration' | 'timestamp', r: DurationRules & TimestampRules): ValueCheck | undefined {
  const checks: ((t: Time) => RuleProblem | undefined)[] = [];
  if (r.const !== undefined) {
    const c = boundOf(r.const);
    checks.push((t) => (timeCompare(t, c) === 0 ? undefined : problem(`${kind}.const`, `must be ${showTime(c)}`)));
  }
  const bound = (b: TimeBound | undefined): Time | undefined => (b === undefined ? undefined : boundOf(b));
  const range = rangeCheck<Time>(
    kind,
    { gt: bound(r.gt), gte: bound(r.gte), lt: bound(r.lt), lte: bound(r.lte) },
    timeCompare,
    showTime,
  );
  if (range) checks.push(range);
  if (r.in) {
    const list = r.in.map(boundOf);
    checks.push((t) =>
      list.some((x) => timeCompare(t, x) === 0)
        ? undefined
        : problem(`${kind}.in`, `must be one of ${list.map(showTime).join(', ')}`),
    );
  }
  if (r.not_in) {
    const list = r.not_in.map(boundOf);
    checks.push((t) =>
      list.some((x) => timeCompare(t, x) === 0) ? problem(`${kind}.not_in`, `must not be ${showTime(t)}`) : undefined,
    );
  }
  const nowTime = (): Time => {
    const ms = Date.now();
    return [Math.floor(ms / 1000), (ms % 1000) * 1e6];
  };
  if (r.lt_now)
    checks.push((t) => (timeCompare(t, nowTime()) < 0 ? undefined : problem(`${kind}.lt_now`, 'must be in the past')));
  if (r.gt_now)
    checks.push((t) =>
      timeCompare(t, nowTime()) > 0 ? undefined : problem(`${kind}.gt_now`, 'must be in the future'),
    );
  if (r.within !== undefined) {
    const w = boundOf(r.within);
    checks.push((t) => {
      const now = nowTime();
      const d = Math.abs(t[0] - now[0] + (t[1] - now[1]) / 1e9);
      return d <= w[0] + w[1] / 1e9 ? undefined : problem(`${kind}.within`, `must be within ${showTime(w)} of now`);
    });
  }
  if (checks.length === 0) return undefined;
  return (v) => {
    const t = timeOf(v);
    for (const c of checks) {
      const p = c(t);
      if (p) return p;
    }
    return undefined;
  };
}

export { all as allChecks };

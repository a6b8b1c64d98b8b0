/** Fault injection rules: answer the next N matching requests with an error status, or delay them. */

export interface RequestInfo {
  readonly method: string;
  /** Path without the query string. */
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly watch: boolean;
}

/** A substring of "path?query", a RegExp over it, or a predicate. Omitted = every request. */
export type RequestMatch = string | RegExp | ((r: RequestInfo) => boolean);

export function matches(m: RequestMatch | undefined, r: RequestInfo): boolean {
  if (m === undefined) return true;
  if (typeof m === 'function') return m(r);
  const qs = new URLSearchParams(r.query).toString();
  const full = qs ? `${r.path}?${qs}` : r.path;
  return typeof m === 'string' ? full.includes(m) : m.test(full);
}

interface FailRule {
  remaining: number;
  readonly status: number;
  readonly match: RequestMatch | undefined;
}

interface DelayRule {
  readonly ms: number;
  readonly match: RequestMatch | undefined;
}

export class Faults {
  private fails: FailRule[] = [];
  private delays: DelayRule[] = [];

  failNext(count: number, status: number, match?: RequestMatch): void {
    this.fails.push({ remaining: count, status, match });
  }

  delay(ms: number, match?: RequestMatch): void {
    this.delays.push({ ms, match });
  }

  clear(): void {
    this.fails = [];
    this.delays = [];
  }

  /** The status to fail this request with (consuming one from the first matching rule), if any. */
  takeFailure(r: RequestInfo): number | undefined {
    const rule = this.fails.find((f) => f.remaining > 0 && matches(f.match, r));
    if (!rule) return undefined;
    rule.remaining--;
    this.fails = this.fails.filter((f) => f.remaining > 0);
    return rule.status;
  }

  delayFor(r: RequestInfo): number {
    return this.delays.filter((d) => matches(d.match, r)).reduce((sum, d) => sum + d.ms, 0);
  }
}

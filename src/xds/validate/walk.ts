/**
 * One walk of the Envoy check over a resource: where it is (the field path), which Istio object it
 * is under, what it found. The walker (walker.ts) reports through it; Envoy's cross-field rules
 * (envoy-rules.ts) are hooks that report through it too.
 */
import type { RuleProblem } from './scalar-rules.js';

/** One violated rule. */
export interface Violation {
  /** Field path inside the resource, e.g. `virtual_hosts[0].routes[2].route.cluster_header`. */
  readonly path: string;
  /** The rule, as written in the proto (`string.min_len`), or a cross-field rule's id (`envoy.…`). */
  readonly rule: string;
  readonly message: string;
  /** `filter_metadata.istio.config` of the innermost element on the path that has one. */
  readonly source?: string;
}

/** A path segment: a field name, a list index, or a map key. */
export type Segment = string | number | { readonly key: string };

/** The state of one walk: where it is, which Istio object it is under, what it found. */
export class Walk {
  readonly segs: Segment[] = [];
  readonly sources: string[] = [];
  readonly out: Violation[] = [];

  /** Sub-messages found clean in this walk: a strong set, dropped with the walk, cheap for the GC. */
  constructor(public clean: Set<object> = new Set()) {}

  /**
   * Makes a walk ready for the next resource (`clean` as the constructor's), its violations taken: a
   * validator walks each of the 121k resources of a 10k mesh with one; a new walk each time (four
   * objects, and the path's backing store grown again) allocated ~24 MB in the check at 10k.
   */
  restart(clean: Set<object> = new Set()): this {
    this.clean = clean;
    this.segs.length = 0;
    this.sources.length = 0;
    this.out.length = 0;
    return this;
  }

  report(p: RuleProblem, ...extra: Segment[]): void {
    const segs = extra.length ? [...this.segs, ...extra] : this.segs;
    const source = this.sources[this.sources.length - 1];
    this.out.push({ path: renderPath(segs), rule: p.rule, message: p.message, ...(source ? { source } : {}) });
  }
}

export function renderPath(segs: readonly Segment[]): string {
  let s = '';
  for (const seg of segs) {
    if (typeof seg === 'number') s += `[${seg}]`;
    else if (typeof seg === 'string') s += s ? `.${seg}` : seg;
    else s += `[${JSON.stringify(seg.key)}]`;
  }
  return s;
}

/** A check of one message type beyond its field rules (Envoy's cross-field rules, RE2); reports through `walk`. */
export type MessageHook = (message: Record<string, unknown>, walk: Walk) => void;

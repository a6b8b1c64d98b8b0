/**
 * The projection of what a validator read, recorded without a tracking view: the validators of
 * the kinds in RECORDED_KINDS (the bulk of a mesh: its Pods, Services, EndpointSlices,
 * VirtualServices and DestinationRules) read raw members only through the reader helpers (`get`, `list`, `mapOf`),
 * which tell the recorder. The projection is the one src/inputs/read-tracker.ts gives for the same
 * reads (lists keep their length, an element never read is null, a frozen member is kept whole);
 * a test compares both on every golden case, the fixtures and the synthetic mesh. An object reached
 * twice (a YAML alias) could have been read differently on each path: no projection then, and the
 * caller reads it again through a tracker. Pure.
 */
import { setMember } from './plain-object.js';
import { recordReads, type MemberReads, type Raw } from './validate/reader.js';

/** Kinds whose validators (k8s.ts, virtual-service.ts, destination-rule.ts) read only through the reader helpers. */
export const RECORDED_KINDS: ReadonlySet<string> = new Set([
  'Service',
  'Endpoints',
  'EndpointSlice',
  'Pod',
  'Namespace',
  'Node',
  'VirtualService',
  'DestinationRule',
]);

type Container = Record<string, unknown> | unknown[];

const isContainer = (v: unknown): v is Container => v !== null && typeof v === 'object';

/** The head of a list read whole (every element read). */
const ALL = -1;
/** The end of an object's chain of keys. */
const END = -1;

/**
 * The reads of one object, as a writer of its stored form walks them (src/snapshot/stored-inputs/
 * recorded-bytes.ts writes canonical bytes straight from them, with no projection in between).
 */
export interface RecordedReads {
  /**
   * Writes the keys read of `obj` into `out` from index `at` (in reading order; none when it was not
   * read, or is a list read whole); returns the index after the last.
   */
  keysRead(obj: object, out: string[], at: number): number;
  /** True when every element of `items` was read. */
  readWhole(items: readonly unknown[]): boolean;
}

export class ReadRecorder implements MemberReads, RecordedReads {
  /**
   * Per object read: the index in the log of the first key read of it, or ALL. The keys read are
   * one log, chained per object (`next`), reused from one document to the next: recording a read
   * allocates nothing but the map's entry.
   */
  private readonly heads = new Map<object, number>();
  private readonly keys: string[] = [];
  private readonly next: number[] = [];
  /** The object read last and its head: validators read a few members of one object in a row. */
  private last: object | undefined;
  private lastHead = ALL;

  read(obj: object, key: string): void {
    let head: number | undefined;
    if (obj === this.last) head = this.lastHead;
    else {
      head = this.heads.get(obj);
      const first = head === undefined;
      if (head === undefined) this.heads.set(obj, (head = this.log(key)));
      this.last = obj;
      this.lastHead = head;
      if (first) return;
    }
    if (head === ALL) return;
    let i = head;
    for (;;) {
      if (this.keys[i] === key) return;
      const n = this.next[i] as number;
      if (n === END) break;
      i = n;
    }
    this.next[i] = this.log(key);
  }

  readAll(items: readonly unknown[]): void {
    this.heads.set(items, ALL);
    if (items === this.last) this.lastHead = ALL;
  }

  keysRead(obj: object, out: string[], at: number): number {
    const head = this.heads.get(obj);
    if (head === undefined || head === ALL) return at;
    for (let i = head; i !== END; i = this.next[i] as number) out[at++] = this.keys[i] as string;
    return at;
  }

  readWhole(items: readonly unknown[]): boolean {
    return this.heads.get(items) === ALL;
  }

  /** Records the reads `f` makes (after forgetting earlier ones: one recorder serves document after document). */
  during<T>(f: () => T): T {
    this.heads.clear();
    this.keys.length = 0;
    this.next.length = 0;
    this.last = undefined;
    recordReads(this);
    try {
      return f();
    } finally {
      recordReads(undefined);
    }
  }

  /** A plain copy of what was read of `root`, or undefined when some object is reached twice. */
  projection(root: Raw): Record<string, unknown> | undefined {
    const seen = new Set<object>();
    let shared = false;
    const project = (target: Container): Container => {
      if (seen.has(target)) shared = true;
      seen.add(target);
      const head = this.heads.get(target);
      if (Array.isArray(target))
        return target.map(
          (v, i) =>
            (head === ALL || (head !== undefined && this.hasKey(head, String(i)))
              ? member(target, String(i), v)
              : undefined) ?? null,
        );
      const out: Record<string, unknown> = {};
      if (head === undefined || head === ALL) return out;
      // In the order of reading, not the object's: the stored form is canonical JSON, keys sorted.
      for (let i = head; i !== END; i = this.next[i] as number) {
        const key = this.keys[i] as string;
        const v = member(target, key, target[key]);
        if (v !== undefined) setMember(out, key, v);
      }
      return out;
    };
    const member = (parent: object, key: string, v: unknown): unknown =>
      isContainer(v) && !isFrozenMember(parent, key) ? project(v) : v;
    const out = project(root as Record<string, unknown>) as Record<string, unknown>;
    return shared ? undefined : out;
  }

  /** Appends a key to the log (the end of its object's chain). */
  private log(key: string): number {
    this.next.push(END);
    return this.keys.push(key) - 1;
  }

  private hasKey(head: number, key: string): boolean {
    for (let i = head; i !== END; i = this.next[i] as number) if (this.keys[i] === key) return true;
    return false;
  }
}

/**
 * A member the tracking view must keep whole (a Proxy returns a frozen member as it is). Only a
 * frozen or sealed object's members are looked at: parsed documents are extensible, and a
 * non-writable member of an extensible object is never made by a parser.
 */
function isFrozenMember(t: object, key: string): boolean {
  if (Object.isExtensible(t)) return false;
  const d = Object.getOwnPropertyDescriptor(t, key);
  return d !== undefined && !d.configurable && !d.writable;
}

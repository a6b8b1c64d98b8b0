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

/** Objects of one document found by a scan up to this many; past it, through a map. */
const SCAN_MAX = 32;

export class ReadRecorder implements MemberReads, RecordedReads {
  /**
   * The objects read, in first-read order, and per object the index in the log of the first key
   * read of it, or ALL. Most documents read a few dozen objects: a scan finds one without a map
   * entry per object (a map per document is rebuilt from empty, its table regrown each time); the
   * map indexes them only past SCAN_MAX.
   */
  private readonly objects: object[] = [];
  private readonly heads: number[] = [];
  private count = 0;
  private readonly index = new Map<object, number>();
  /**
   * The keys read are one log, chained per object (`next`), reused from one document to the next
   * (`size`: its length now): recording a read allocates nothing.
   */
  private readonly keys: string[] = [];
  private readonly next: number[] = [];
  private size = 0;
  /** The object read last and its head: validators read a few members of one object in a row. */
  private last: object | undefined;
  private lastHead = ALL;

  read(obj: object, key: string): void {
    let head: number;
    if (obj === this.last) head = this.lastHead;
    else {
      const at = this.find(obj);
      this.last = obj;
      if (at < 0) {
        this.lastHead = this.log(key);
        this.add(obj, this.lastHead);
        return;
      }
      head = this.lastHead = this.heads[at] as number;
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
    const at = this.find(items);
    if (at < 0) this.add(items, ALL);
    else this.heads[at] = ALL;
    if (items === this.last) this.lastHead = ALL;
  }

  keysRead(obj: object, out: string[], at: number): number {
    const head = this.headOf(obj);
    if (head === undefined || head === ALL) return at;
    for (let i = head; i !== END; i = this.next[i] as number) out[at++] = this.keys[i] as string;
    return at;
  }

  readWhole(items: readonly unknown[]): boolean {
    return this.headOf(items) === ALL;
  }

  /** Records the reads `f` makes (after forgetting earlier ones: one recorder serves document after document). */
  during<T>(f: () => T): T {
    if (this.count > SCAN_MAX) this.index.clear();
    // The previous document's objects are let go (a recorder may outlive them: the watcher's).
    this.objects.fill(undefined as unknown as object, 0, this.count);
    this.count = 0;
    this.size = 0;
    this.last = undefined;
    recordReads(this);
    try {
      return f();
    } finally {
      recordReads(undefined);
    }
  }

  private headOf(obj: object): number | undefined {
    const at = this.find(obj);
    return at < 0 ? undefined : this.heads[at];
  }

  /** The position of `obj` among the objects read, or -1. */
  private find(obj: object): number {
    if (this.count > SCAN_MAX) return this.index.get(obj) ?? -1;
    const objects = this.objects;
    for (let i = this.count - 1; i >= 0; i--) if (objects[i] === obj) return i;
    return -1;
  }

  private add(obj: object, head: number): void {
    const at = this.count++;
    this.objects[at] = obj;
    this.heads[at] = head;
    if (this.count <= SCAN_MAX) return;
    if (this.count === SCAN_MAX + 1) for (let i = 0; i < at; i++) this.index.set(this.objects[i] as object, i);
    this.index.set(obj, at);
  }

  /** A plain copy of what was read of `root`, or undefined when some object is reached twice. */
  projection(root: Raw): Record<string, unknown> | undefined {
    const seen = new Set<object>();
    let shared = false;
    const project = (target: Container): Container => {
      if (seen.has(target)) shared = true;
      seen.add(target);
      const head = this.headOf(target);
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
    const at = this.size++;
    this.keys[at] = key;
    this.next[at] = END;
    return at;
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

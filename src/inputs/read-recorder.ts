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

/** Every element of a list was read. */
const ALL = true;

export class ReadRecorder implements MemberReads {
  /** Per object read: its keys read, in order of first reading (a few per object: a list beats a Set). */
  private readonly reads = new Map<object, string[] | typeof ALL>();
  /** The object read last and its keys read: validators read a few members of one object in a row. */
  private last: object | undefined;
  private lastKeys: string[] | typeof ALL = ALL;

  read(obj: object, key: string): void {
    if (obj !== this.last) {
      let keys = this.reads.get(obj);
      if (keys === undefined) this.reads.set(obj, (keys = []));
      this.last = obj;
      this.lastKeys = keys;
    }
    const keys = this.lastKeys;
    if (keys !== ALL && !keys.includes(key)) keys.push(key);
  }

  readAll(items: readonly unknown[]): void {
    this.reads.set(items, ALL);
    if (items === this.last) this.lastKeys = ALL;
  }

  /** Forgets every read: the recorder is reused for the next document. */
  clear(): void {
    this.reads.clear();
    this.last = undefined;
    this.lastKeys = ALL;
  }

  /** Records the reads `f` makes (after forgetting earlier ones). */
  during<T>(f: () => T): T {
    this.clear();
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
      const reads = this.reads.get(target);
      if (Array.isArray(target))
        return target.map(
          (v, i) => (reads === ALL || reads?.includes(String(i)) ? member(target, String(i), v) : undefined) ?? null,
        );
      const out: Record<string, unknown> = {};
      if (reads === undefined || reads === ALL) return out;
      // In the order of reading, not the object's: the stored form is canonical JSON, keys sorted.
      for (let i = 0; i < reads.length; i++) {
        const key = reads[i] as string;
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

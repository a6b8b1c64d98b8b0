/**
 * Records which parts of a raw object a reader looks at: `tracked(raw)` gives a view of the
 * object (a Proxy) and `projection()` a copy holding only the members read through that view,
 * at any depth. Used to store only what the validators read (src/inputs/retain.ts): whatever a
 * validator never looks at (a Pod's env, a Secret-like blob under an unknown field) cannot reach
 * the compiler, so it need not be stored. Pure.
 */
import { setMember } from './plain-object.js';

type Container = Record<string, unknown> | unknown[];

const isContainer = (v: unknown): v is Container => v !== null && typeof v === 'object';

/** A member read: `KEPT_WHOLE` for a value copied as it is (not a container, or frozen), else its own tracker. */
const KEPT_WHOLE = null;
type Read = ReadTracker | typeof KEPT_WHOLE;

export class ReadTracker {
  /** Own members read (allocated on the first read). */
  private reads: Map<string, Read> | undefined;
  private view: Container | undefined;

  constructor(private readonly target: Container) {}

  /** The object as a reader should see it; reads through it are recorded. */
  tracked(): Container {
    // Every validator read of every stored object comes through here: no allocation per read, and a
    // member read before costs one map lookup.
    return (this.view ??= new Proxy(this.target, {
      get: (t, key): unknown => {
        const value: unknown = (t as Record<string | symbol, unknown>)[key];
        if (typeof key !== 'string') return value;
        const reads = (this.reads ??= new Map());
        const seen = reads.get(key);
        if (seen !== undefined) return seen === KEPT_WHOLE ? value : seen.tracked();
        if (!Object.hasOwn(t, key)) return value;
        // A Proxy must return a frozen member as it is: keep it whole.
        if (!isContainer(value) || isFrozenMember(t, key)) {
          reads.set(key, KEPT_WHOLE);
          return value;
        }
        const created = new ReadTracker(value);
        reads.set(key, created);
        return created.tracked();
      },
    }));
  }

  /** A plain copy of the members read (lists keep their length: an element never read is null). */
  projection(): Container {
    const { reads, target } = this;
    if (Array.isArray(target)) return target.map((v, i) => (reads && picked(reads, String(i), v)) ?? null);
    const out: Record<string, unknown> = {};
    if (!reads) return out;
    for (const key of Object.keys(target)) {
      const v = picked(reads, key, target[key]);
      if (v !== undefined) setMember(out, key, v);
    }
    return out;
  }
}

function picked(reads: ReadonlyMap<string, Read>, key: string, value: unknown): unknown {
  const read = reads.get(key);
  if (read === undefined) return undefined;
  return read === KEPT_WHOLE ? value : read.projection();
}

function isFrozenMember(t: object, key: string): boolean {
  const d = Object.getOwnPropertyDescriptor(t, key);
  return d !== undefined && !d.configurable && !d.writable;
}

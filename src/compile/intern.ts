/**
 * Hash-consing of compiled sub-messages: structurally identical parts of different resources (a
 * cluster's circuit breakers, a listener's filters, an endpoint's locality) are built once and
 * shared by identity. The output then holds fewer objects, and the encoder and the Envoy check,
 * which remember work per object, do that work once.
 *
 * Sharing is safe because messages are immutable after compile. To keep it so, every interned
 * value is deep-frozen: a later edit of a shared part throws instead of leaking into another
 * resource (modules are strict code).
 *
 * The tables are module-wide and bounded (cleared when full): values depend only on their key, so
 * a value from an earlier compile is as good as a new one, and an incremental compile shares
 * parts with the output it patches.
 */
import { durationMs, packAny, type Any, type Duration } from '../xds/proto.js';

/** Entries a table holds before it starts over. */
const LIMIT = 1 << 15;

/** Every table alive (weakly: a table made per security set dies with it), for releaseInternTables. */
const tables = new Set<WeakRef<InternTable<object>>>();
const dropDead = new FinalizationRegistry<WeakRef<InternTable<object>>>((ref) => tables.delete(ref));

/**
 * Empties every intern table, for a process that compiles once and then builds (the one-shot
 * pipeline, src/pipeline.ts compileHanded): at 10k services the tables hold ~25 MB of keys and, as
 * the build consumes the output, of values no resource holds any more, which every later full
 * collection would mark. Values depend only on their key: a later compile makes equal ones.
 */
export function releaseInternTables(): void {
  for (const ref of tables) ref.deref()?.clear();
}

/** A bounded table of shared immutable values by key. */
export class InternTable<T extends object> {
  private readonly byKey = new Map<string, T>();

  constructor() {
    const ref = new WeakRef<InternTable<object>>(this);
    tables.add(ref);
    dropDead.register(this, ref);
  }

  /** Forgets every value (releaseInternTables). */
  clear(): void {
    this.byKey.clear();
  }

  /** The value for `key`, made (and deep-frozen) by `make` the first time. */
  get(key: string, make: () => T): T {
    let v = this.byKey.get(key);
    if (v === undefined) {
      if (this.byKey.size >= LIMIT) this.byKey.clear();
      v = deepFreeze(make());
      this.byKey.set(key, v);
    }
    return v;
  }

  /** The shared copy of a plain JSON-like value (no bytes, no undefined members), keyed by its JSON text. */
  share(value: T): T {
    return this.get(JSON.stringify(value), () => value);
  }
}

/**
 * Freezes a message and everything it holds, except byte buffers (which cannot be frozen). A part
 * that is frozen already is not walked again: the compiler freezes only whole values (deep-frozen
 * constants and interned parts, endpoints frozen level by level), so a frozen part is frozen
 * through, and shared parts are not walked once per value that holds them.
 */
export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || ArrayBuffer.isView(value)) return value;
  Object.freeze(value);
  // for…in: no array of values per object (plain objects and arrays have no inherited enumerables).
  for (const k in value) freezeUnlessFrozen((value as Record<string, unknown>)[k]);
  return value;
}

function freezeUnlessFrozen(value: unknown): void {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) deepFreeze(value);
}

const anys = new InternTable<Any>();

/**
 * `packAny` for small configs that recur across resources (protocol options): one packed Any,
 * encoded once, per distinct message (keyed by its JSON text, so the message holds no bytes).
 */
export function packShared(typeName: string, message: object): Any {
  return anys.get(`${typeName}\n${JSON.stringify(message)}`, () => packAny(typeName, message));
}

const durations = new InternTable<Duration>();

/** The shared `google.protobuf.Duration` of `ms` milliseconds (timeouts repeat across thousands of clusters). */
export const sharedDurationMs = (ms: number): Duration => durations.get(String(ms), () => durationMs(ms));

/**
 * `make(source, flag)` deep-frozen, made once per source object and flag: a translation that many
 * outputs hold the same of (a VirtualService route's match or retries, translated for every
 * listener port and for sidecars and proxyless clients alike). Let go with its source.
 */
export function frozenPerSource<S extends object, T>(
  make: (source: S, flag: boolean) => T,
): (source: S, flag: boolean) => T {
  const made = new WeakMap<S, [T | undefined, T | undefined]>();
  return (source, flag) => {
    let known = made.get(source);
    if (!known) made.set(source, (known = [undefined, undefined]));
    const at = flag ? 1 : 0;
    return (known[at] ??= deepFreeze(make(source, flag)));
  };
}

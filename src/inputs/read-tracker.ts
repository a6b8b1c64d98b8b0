/**
 * Records which parts of a raw object a reader looks at: `tracked(raw)` gives a view of the
 * object (a Proxy) and `projection()` a copy holding only the members read through that view,
 * at any depth. Used to store only what the validators read (src/inputs/retain.ts): whatever a
 * validator never looks at (a Pod's env, a Secret-like blob under an unknown field) cannot reach
 * the compiler, so it need not be stored. Pure.
 */
type Container = Record<string, unknown> | unknown[];

const isContainer = (v: unknown): v is Container => v !== null && typeof v === 'object';

export class ReadTracker {
  /** Own members read whose value is a container, with their own trackers (allocated on the first such read). */
  private children: Map<string, ReadTracker> | undefined;
  /** Own members read whose value is not a container (allocated on the first such read). */
  private leaves: Set<string> | undefined;
  private view: Container | undefined;

  constructor(private readonly target: Container) {}

  /** The object as a reader should see it; reads through it are recorded. */
  tracked(): Container {
    // Every validator read of every stored object comes through here: no allocation per read.
    return (this.view ??= new Proxy(this.target, {
      get: (t, key, receiver): unknown => {
        const value: unknown = Reflect.get(t, key, receiver);
        if (typeof key !== 'string' || !Object.hasOwn(t, key)) return value;
        if (!isContainer(value)) {
          (this.leaves ??= new Set()).add(key);
          return value;
        }
        const children = (this.children ??= new Map());
        const child = children.get(key);
        if (child) return child.tracked();
        if (this.leaves?.has(key)) return value;
        // A Proxy must return a frozen member as it is: keep it whole (checked on the first read only).
        const d = Object.getOwnPropertyDescriptor(t, key);
        if (d && !d.configurable && !d.writable) {
          (this.leaves ??= new Set()).add(key);
          return value;
        }
        const created = new ReadTracker(value);
        children.set(key, created);
        return created.tracked();
      },
    }));
  }

  /** A plain copy of the members read (lists keep their length: an element never read is null). */
  projection(): Container {
    const { children, leaves } = this;
    const pick = (key: string): unknown => {
      const child = children?.get(key);
      if (child) return child.projection();
      return leaves?.has(key) ? (this.target as Record<string, unknown>)[key] : undefined;
    };
    if (Array.isArray(this.target)) return this.target.map((_, i) => pick(String(i)) ?? null);
    const out = Object.create(null) as Record<string, unknown>;
    if (!children && !leaves) return out;
    for (const key of Object.keys(this.target)) {
      const v = pick(key);
      if (v !== undefined) out[key] = v;
    }
    return out;
  }
}

/**
 * Bounds on inputs, so a hostile or broken input is refused fast with a diagnostic instead of
 * exhausting time and memory. Generous for real meshes: Kubernetes itself refuses an object over
 * 1.5 MiB (etcd's request limit), Istio has no route limit but that bounds it. Documented in the
 * README ("Limits").
 */
export const INPUT_LIMITS = {
  /** One object (a YAML/JSON document, or one item of a List), as Kubernetes: 1.5 MiB. */
  maxObjectBytes: 1_572_864,
  /** All input texts of one compile. */
  maxInputBytes: 256 * 1024 * 1024,
  /** Documents (objects) in one compile. */
  maxDocuments: 250_000,
  /** Items of any one repeated field (list) of an object. */
  maxListItems: 10_000,
  /** Repeated fields that multiply the compile's work (hosts × routes × matches × destinations). */
  maxHosts: 1_000,
  maxHttpRoutes: 5_000,
  maxMatches: 1_000,
  maxDestinations: 1_000,
  /** `configPatches` of one EnvoyFilter: each is matched against every listener, route and cluster of the proxies it selects. */
  maxEnvoyFilterPatches: 256,
} as const;

export const TOO_LARGE = 'too-large';

/** A human size: `1.5 MiB`, `256 MiB`. */
export const mib = (bytes: number): string => `${Number((bytes / 1024 / 1024).toFixed(2))} MiB`;

/**
 * The bounds of one parsed document, in one walk (iterative: safe for any depth): 'depth' when an
 * object or list sits deeper than `maxDepth` levels (the root is level 1), else 'size' when its JSON
 * text would be longer than `maxBytes` bytes, counted without building the text and approximate by a
 * few bytes per member, as a size bound needs to be; undefined when it is within both.
 */
export function documentExceeds(root: object, maxDepth: number, maxBytes: number): 'depth' | 'size' | undefined {
  const values: unknown[] = [root];
  const depths: number[] = [1];
  let size = 0;
  while (values.length > 0) {
    const v = values.pop();
    const depth = depths.pop() as number;
    if (typeof v === 'string') size += v.length + 2;
    else if (v === null || typeof v !== 'object') size += 5;
    else if (depth > maxDepth) return 'depth';
    else if (Array.isArray(v)) {
      size += 2 + v.length;
      for (const x of v) {
        values.push(x);
        depths.push(depth + 1);
      }
    } else {
      // Object.values, not v[key]: a `__proto__` key is an own data property here (yaml-fast.ts).
      size += 2;
      for (const key of Object.keys(v)) size += key.length + 4;
      for (const x of Object.values(v)) {
        values.push(x);
        depths.push(depth + 1);
      }
    }
  }
  return size > maxBytes ? 'size' : undefined;
}

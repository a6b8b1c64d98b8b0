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
} as const;

export const TOO_LARGE = 'too-large';

/** A human size: `1.5 MiB`, `256 MiB`. */
export const mib = (bytes: number): string => `${Number((bytes / 1024 / 1024).toFixed(2))} MiB`;

/**
 * Whether a parsed value's JSON text is longer than `max` bytes, counted without building the
 * text and stopping as soon as it is (iterative: safe for any depth). Approximate by a few bytes
 * per member, as a size bound needs to be.
 */
export function jsonSizeExceeds(root: unknown, max: number): boolean {
  let size = 0;
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') size += v.length + 2;
    else if (v !== null && typeof v === 'object') {
      if (Array.isArray(v)) {
        size += 2 + v.length;
        for (const x of v) stack.push(x);
      } else {
        size += 2;
        for (const [k, x] of Object.entries(v)) {
          size += k.length + 4;
          stack.push(x);
        }
      }
    } else size += 5;
    if (size > max) return true;
  }
  return false;
}

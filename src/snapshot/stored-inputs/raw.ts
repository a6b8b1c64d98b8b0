/** A raw Kubernetes/Istio object as parsed (plain JSON values), and safe readers of it. */
export type Raw = Readonly<Record<string, unknown>>;

export const isRecord = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** An own property only, so `__proto__` or inherited names never read the prototype. */
export const own = (o: Raw, k: string): unknown => (Object.hasOwn(o, k) ? o[k] : undefined);

/** Readers for decoded Envoy resources (proto3 JSON as src/xds/json.ts renders them). Pure. */

export type JsonObject = Readonly<Record<string, unknown>>;

export const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

export const obj = (v: unknown): JsonObject | undefined => (isObject(v) ? v : undefined);

export const objects = (v: unknown): JsonObject[] => (Array.isArray(v) ? v.filter(isObject) : []);

export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

export const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];

/** A number, also from a 64-bit integer rendered as a string. */
export function num(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && /^-?[0-9]+$/.test(v)) return Number(v);
  return undefined;
}

/** `filter_metadata.istio.config` of a resource's `metadata`: the Istio object that produced it. */
export function istioConfigOf(metadata: unknown): string | undefined {
  return str(obj(obj(obj(metadata)?.filter_metadata)?.istio)?.config);
}

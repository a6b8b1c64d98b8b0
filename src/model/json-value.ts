/** A JSON value as parsed (access log formats carry them). */
export type JsonValue = string | number | boolean | null | readonly JsonValue[] | { readonly [k: string]: JsonValue };

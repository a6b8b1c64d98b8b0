/**
 * Renders decoded Envoy messages as proto3 JSON, the way Envoy's `/config_dump` shows them:
 * proto field names, `@type` on every `Any` (its payload decoded and rendered too), Durations as
 * `"1.5s"`, wrapper types unwrapped, Structs as plain objects, enums by name, 64-bit ints as strings.
 *
 * It walks the JSON descriptor (data, not generated code), so it also runs in Workers.
 */
import { codecOf, decodeMessage } from './proto.js';
import { typeNameOf } from './type-urls.js';
import { lookupType as lookup, resolveTypeRef as resolve, SCALAR_TYPES } from './descriptor-index.js';
import { WRAPPER_SCALARS } from './wrappers.js';

type Json = string | number | boolean | null | Json[] | { [k: string]: Json };

/** The google.protobuf wrapper types, rendered as their bare value. */
export const WRAPPERS: ReadonlySet<string> = new Set(Object.keys(WRAPPER_SCALARS));
const INT64 = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);
/** Proto scalar type names (descriptor-index.ts). */
export const SCALARS = SCALAR_TYPES;

const resolved = new Map<string, string | undefined>();
function resolveCached(typeRef: string, scope: string): string | undefined {
  const key = `${scope}|${typeRef}`;
  if (!resolved.has(key)) resolved.set(key, resolve(typeRef, scope));
  return resolved.get(key);
}

function toBase64(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

function durationJson(m: Record<string, unknown>): string {
  const seconds = Number(m.seconds ?? 0);
  const nanos = Number(m.nanos ?? 0);
  const total = seconds + nanos / 1e9;
  return `${Number(total.toFixed(9))}s`;
}

function structJson(m: Record<string, unknown>): Json {
  const out: Record<string, Json> = {};
  const fields = (m.fields ?? {}) as Record<string, Record<string, unknown>>;
  for (const k of Object.keys(fields)) out[k] = valueJson(fields[k] ?? {});
  return out;
}

function valueJson(v: Record<string, unknown>): Json {
  if ('stringValue' in v && v.stringValue != null) return v.stringValue as string;
  if ('numberValue' in v && v.numberValue != null) return v.numberValue as number;
  if ('boolValue' in v && v.boolValue != null) return v.boolValue as boolean;
  if ('structValue' in v && v.structValue != null) return structJson(v.structValue as Record<string, unknown>);
  if ('listValue' in v && v.listValue != null)
    return (((v.listValue as Record<string, unknown>).values ?? []) as Record<string, unknown>[]).map(valueJson);
  return null;
}

function scalarJson(type: string, v: unknown): Json {
  if (INT64.has(type)) return String(v);
  if (type === 'bytes') return toBase64(v as Uint8Array);
  return v as Json;
}

/** Renders an `Any`: `{"@type": url, ...payload}`; an undecodable payload is shown as base64. */
export function anyToJson(typeUrl: string, value: Uint8Array): Json {
  const name = typeNameOf(typeUrl);
  if (!codecOf(name) || !lookup(name))
    return value.length === 0 ? { '@type': typeUrl } : { '@type': typeUrl, value: toBase64(value) };
  const inner = messageToJson(name, decodeMessage(name, value) as Record<string, unknown>);
  if (inner !== null && typeof inner === 'object' && !Array.isArray(inner)) return { '@type': typeUrl, ...inner };
  return { '@type': typeUrl, value: inner };
}

/** Renders a decoded message of type `typeName` as proto3 JSON. */
export function messageToJson(typeName: string, message: Record<string, unknown>): Json {
  if (typeName === 'google.protobuf.Any')
    return anyToJson(String(message.type_url ?? ''), (message.value as Uint8Array) ?? new Uint8Array());
  if (typeName === 'google.protobuf.Duration') return durationJson(message);
  if (typeName === 'google.protobuf.Struct') return structJson(message);
  if (typeName === 'google.protobuf.Value') return valueJson(message);
  if (WRAPPERS.has(typeName)) {
    const t = typeName === 'google.protobuf.Int64Value' || typeName === 'google.protobuf.UInt64Value' ? 'int64' : 'x';
    return scalarJson(
      t,
      message.value ??
        (typeName === 'google.protobuf.BoolValue' ? false : typeName === 'google.protobuf.StringValue' ? '' : 0),
    );
  }
  const type = lookup(typeName);
  const out: Record<string, Json> = {};
  for (const [name, field] of Object.entries(type?.fields ?? {})) {
    if (!Object.prototype.hasOwnProperty.call(message, name)) continue;
    const v = message[name];
    if (v === null || v === undefined) continue;
    if (field.keyType) {
      const entries = Object.keys(v as object);
      if (entries.length === 0) continue;
      const m: Record<string, Json> = {};
      for (const k of entries) m[k] = fieldJson(field.type, typeName, (v as Record<string, unknown>)[k]);
      out[name] = m;
    } else if (field.rule === 'repeated') {
      const arr = v as unknown[];
      if (arr.length === 0) continue;
      out[name] = arr.map((x) => fieldJson(field.type, typeName, x));
    } else {
      out[name] = fieldJson(field.type, typeName, v);
    }
  }
  return out;
}

function fieldJson(type: string, scope: string, v: unknown): Json {
  if (SCALARS.has(type)) return scalarJson(type, v);
  const full = resolveCached(type, scope);
  if (!full) return v as Json;
  const t = lookup(full);
  if (t?.values) {
    const name = Object.entries(t.values).find(([, n]) => n === v)?.[0];
    return name ?? (v as number);
  }
  return messageToJson(full, v as Record<string, unknown>);
}

/** Decodes resource bytes and renders them as a `@type`-tagged JSON object. */
export function resourceToJson(typeName: string, bytes: Uint8Array): Json {
  return anyToJson(`type.googleapis.com/${typeName}`, bytes);
}

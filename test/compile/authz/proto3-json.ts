/**
 * Test helper: proto3 JSON as istiod's goldens print it (camelCase names, `@type` on Any, "1.5s"
 * durations, enum names) → protobufjs `$Properties` (snake_case, Any packed). Unlike protobufjs
 * `fromObject`, an unknown key throws, so a golden can never lose a field on the way in.
 */
import descriptor from '../../../src/xds/gen/descriptor.js';
import type { DescriptorNamespace } from '../../../src/xds/descriptor-types.js';
import { encodeMessage, toStruct, type JsonValue } from '../../../src/xds/proto.js';
import { SCALARS, WRAPPERS } from '../../../src/xds/json.js';
import { typeNameOf } from '../../../src/xds/type-urls.js';

type Json = unknown;

function lookup(fullName: string): DescriptorNamespace | undefined {
  let node: DescriptorNamespace | undefined = descriptor;
  for (const part of fullName.split('.')) node = node?.nested?.[part];
  return node;
}

function resolve(typeRef: string, scope: string): string | undefined {
  const parts = scope.split('.');
  for (let i = parts.length; i >= 0; i--) {
    const candidate = [...parts.slice(0, i), typeRef].join('.');
    if (lookup(candidate)) return candidate;
  }
  return undefined;
}

const camel = (snake: string): string => snake.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
function scalar(type: string, v: Json, where: string): unknown {
  if (type === 'bytes') return Uint8Array.from(Buffer.from(String(v), 'base64'));
  if (type === 'string' || type === 'bool') return v;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new Error(`${where}: not a number: ${String(v)}`);
  return n;
}

function duration(v: Json, where: string): { seconds: number; nanos?: number } {
  const m = /^(-?\d+)(?:\.(\d{1,9}))?s$/.exec(String(v));
  if (!m) throw new Error(`${where}: bad duration ${String(v)}`);
  const nanos = m[2] ? Number(m[2].padEnd(9, '0')) : 0;
  return nanos ? { seconds: Number(m[1]), nanos } : { seconds: Number(m[1]) };
}

function value(type: string, scope: string, v: Json, where: string): unknown {
  if (SCALARS.has(type)) return scalar(type, v, where);
  const full = resolve(type, scope);
  if (!full) throw new Error(`${where}: unknown type ${type}`);
  const t = lookup(full);
  if (t?.values) {
    if (typeof v === 'number') return v;
    const n = t.values[String(v)];
    if (n === undefined) throw new Error(`${where}: unknown enum value ${String(v)} of ${full}`);
    return n;
  }
  return fromProto3Json(full, v, where);
}

export function fromProto3Json(typeName: string, json: Json, where = typeName): Record<string, unknown> {
  if (typeName === 'google.protobuf.Any') {
    const { '@type': url, ...rest } = json as Record<string, unknown>;
    const inner = typeNameOf(String(url));
    return { type_url: url, value: encodeMessage(inner, fromProto3Json(inner, rest, `${where}<${inner}>`)) };
  }
  if (typeName === 'google.protobuf.Duration') return duration(json, where);
  if (typeName === 'google.protobuf.Struct')
    return toStruct(json as Record<string, JsonValue>) as Record<string, unknown>;
  if (WRAPPERS.has(typeName)) return { value: json };
  const type = lookup(typeName);
  if (!type?.fields) throw new Error(`${where}: no message ${typeName}`);
  if (json === null || typeof json !== 'object' || Array.isArray(json)) throw new Error(`${where}: expected an object`);
  const byJsonName = new Map(Object.keys(type.fields).flatMap((f) => [[camel(f), f] as const, [f, f] as const]));
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(json)) {
    const name = byJsonName.get(key);
    const field = name === undefined ? undefined : type.fields[name];
    if (name === undefined || field === undefined) throw new Error(`${where}: unknown field "${key}" of ${typeName}`);
    const at = `${where}.${key}`;
    if (field.keyType)
      out[name] = Object.fromEntries(
        Object.entries(v as object).map(([k, x]) => [k, value(field.type, typeName, x, `${at}[${k}]`)]),
      );
    else if (field.rule === 'repeated')
      out[name] = (v as Json[]).map((x, i) => value(field.type, typeName, x, `${at}[${i}]`));
    else out[name] = value(field.type, typeName, v, at);
  }
  return out;
}

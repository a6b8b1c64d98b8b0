/**
 * The message and enum types of the JSON descriptor (src/xds/gen/descriptor.js) as ready-to-walk
 * tables: each field with its proto name, JSON name, resolved type and oneof. Data only (no code
 * generation), so it runs in workerd. Used by json-message.ts (proto3 JSON in) and proto-merge.ts.
 */
import descriptor from './gen/descriptor.js';
import type { DescriptorField, DescriptorNamespace } from './descriptor-types.js';

/** Proto scalar type names. */
export const SCALAR_TYPES: ReadonlySet<string> = new Set([
  'double',
  'float',
  'int32',
  'uint32',
  'sint32',
  'fixed32',
  'sfixed32',
  'int64',
  'uint64',
  'sint64',
  'fixed64',
  'sfixed64',
  'bool',
  'string',
  'bytes',
]);

export interface FieldInfo {
  /** The key in the `$Properties` shape (the descriptor's field name). */
  readonly key: string;
  /** The field's name in the .proto (snake_case); equals `key` except for protobufjs's camelCased google types. */
  readonly protoName: string;
  /** The proto3 JSON name (lowerCamelCase of the proto name). */
  readonly jsonName: string;
  /** A scalar type name, or the fully qualified message or enum name. */
  readonly type: string;
  readonly kind: 'scalar' | 'enum' | 'message';
  readonly repeated: boolean;
  /** The key type of a map field. */
  readonly mapKey?: string;
  /** The oneof the field belongs to. */
  readonly oneof?: string;
}

export interface MessageInfo {
  readonly name: string;
  readonly fields: readonly FieldInfo[];
  /** Fields by shape key, proto name and JSON name. */
  readonly byName: ReadonlyMap<string, FieldInfo>;
}

type Node = DescriptorNamespace & {
  readonly fields?: Readonly<
    Record<string, DescriptorField & { readonly extend?: string; readonly protoName?: string }>
  >;
};

const nodes = new Map<string, Node | null>();

/** A type of the descriptor by its fully qualified name (remembered). */
export function lookupType(fullName: string): Node | undefined {
  const hit = nodes.get(fullName);
  if (hit !== undefined) return hit ?? undefined;
  let node: Node | undefined = descriptor;
  for (const part of fullName.split('.')) node = node?.nested?.[part];
  nodes.set(fullName, node ?? null);
  return node;
}

/** Resolves a field's type reference as protobuf scoping does: innermost enclosing scope first. */
export function resolveTypeRef(typeRef: string, scope: string): string | undefined {
  if (typeRef.startsWith('.')) return lookupType(typeRef.slice(1)) ? typeRef.slice(1) : undefined;
  const parts = scope.split('.');
  for (let i = parts.length; i >= 0; i--) {
    const candidate = [...parts.slice(0, i), typeRef].join('.');
    if (lookupType(candidate)) return candidate;
  }
  return undefined;
}

/** protoc's default json_name: underscores dropped, the letter after one upper-cased. */
export function jsonNameOf(protoName: string): string {
  let out = '';
  let upper = false;
  for (const c of protoName) {
    if (c === '_') upper = true;
    else {
      out += upper ? c.toUpperCase() : c;
      upper = false;
    }
  }
  return out;
}

const messages = new Map<string, MessageInfo | null>();

/** The message type `fullName` (e.g. `envoy.config.listener.v3.Listener`), or undefined when it is not one. */
export function messageInfo(fullName: string): MessageInfo | undefined {
  const hit = messages.get(fullName);
  if (hit !== undefined) return hit ?? undefined;
  const node = lookupType(fullName);
  const info = node?.fields && !node.values ? buildMessage(fullName, node) : undefined;
  messages.set(fullName, info ?? null);
  return info;
}

function buildMessage(fullName: string, node: Node): MessageInfo | undefined {
  const oneofOf = new Map<string, string>();
  for (const [name, o] of Object.entries(node.oneofs ?? {})) for (const f of o.oneof) oneofOf.set(f, name);
  const fields: FieldInfo[] = [];
  for (const [key, f] of Object.entries(node.fields ?? {})) {
    if (f.extend) continue;
    const scalar = SCALAR_TYPES.has(f.type);
    const type = scalar ? f.type : resolveTypeRef(f.type, fullName);
    if (!type) continue; // not in the descriptor set: unreachable by name
    const protoName = f.protoName ?? key;
    fields.push({
      key,
      protoName,
      jsonName: jsonNameOf(protoName),
      type,
      kind: scalar ? 'scalar' : lookupType(type)?.values ? 'enum' : 'message',
      repeated: f.rule === 'repeated',
      ...(f.keyType ? { mapKey: f.keyType } : {}),
      ...(oneofOf.has(key) ? { oneof: oneofOf.get(key) } : {}),
    });
  }
  const byName = new Map<string, FieldInfo>();
  for (const f of fields) for (const n of [f.key, f.protoName, f.jsonName]) if (!byName.has(n)) byName.set(n, f);
  return { name: fullName, fields, byName };
}

/** The values of enum `fullName` by name, or undefined when it is not an enum. */
export function enumValues(fullName: string): Readonly<Record<string, number>> | undefined {
  return lookupType(fullName)?.values;
}

/** Map keys in order: strings by code unit, integers by value, false before true. */
export function compareMapKeys(keyType: string, a: string, b: string): number {
  if (keyType === 'string' || keyType === 'bool') return a < b ? -1 : a > b ? 1 : 0;
  if (!/^-?\d+$/.test(a) || !/^-?\d+$/.test(b)) return a < b ? -1 : a > b ? 1 : 0;
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

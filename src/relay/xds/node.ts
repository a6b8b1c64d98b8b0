/**
 * The xDS `Node` of a request as plain JSON: id and metadata (a google.protobuf.Struct, decoded by
 * the static codec) turned into the shape classifyNode expects.
 */
export interface NodeInfo {
  readonly id: string;
  readonly metadata: Record<string, unknown>;
  /** The node's `locality`, when it names a region (istio-agent sets it from the istio-locality label or the platform). */
  readonly locality?: NodeLocality;
}

export interface NodeLocality {
  readonly region: string;
  readonly zone: string;
  readonly subZone: string;
}

interface LocalityLike {
  region?: string | null;
  zone?: string | null;
  sub_zone?: string | null;
  subZone?: string | null;
}

interface StructLike {
  fields?: Record<string, ValueLike> | null;
}
interface ValueLike {
  kind?: string;
  nullValue?: unknown;
  numberValue?: number | null;
  stringValue?: string | null;
  boolValue?: boolean | null;
  structValue?: StructLike | null;
  listValue?: { values?: ValueLike[] | null } | null;
}

/** Reads the node of a decoded DiscoveryRequest / DeltaDiscoveryRequest; undefined when absent. */
export function nodeOf(
  node: { id?: string | null; metadata?: unknown; locality?: unknown } | null | undefined,
): NodeInfo | undefined {
  if (!node) return undefined;
  const l = node.locality as LocalityLike | null | undefined;
  const region = typeof l?.region === 'string' ? l.region : '';
  const str = (v: unknown): string => (typeof v === 'string' ? v : '');
  return {
    id: node.id ?? '',
    metadata: structToJson(node.metadata as StructLike | null | undefined),
    ...(region ? { locality: { region, zone: str(l?.zone), subZone: str(l?.sub_zone ?? l?.subZone) } } : {}),
  };
}

export function structToJson(struct: StructLike | null | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const fields = struct?.fields;
  if (!fields) return out;
  for (const key of Object.keys(fields)) out[key] = valueToJson(fields[key]);
  return out;
}

function valueToJson(v: ValueLike | undefined): unknown {
  if (!v) return null;
  // The static codec exposes the oneof as a `kind` getter naming the field that is set.
  switch (v.kind) {
    case 'numberValue':
      return v.numberValue;
    case 'stringValue':
      return v.stringValue;
    case 'boolValue':
      return v.boolValue;
    case 'structValue':
      return structToJson(v.structValue);
    case 'listValue':
      return (v.listValue?.values ?? []).map(valueToJson);
    default:
      if (v.kind === undefined) {
        // Plain objects (not codec instances): take whichever member is set.
        if (v.stringValue != null) return v.stringValue;
        if (v.numberValue != null) return v.numberValue;
        if (v.boolValue != null) return v.boolValue;
        if (v.structValue != null) return structToJson(v.structValue);
        if (v.listValue != null) return (v.listValue.values ?? []).map(valueToJson);
      }
      return null;
  }
}

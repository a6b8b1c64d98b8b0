/**
 * Go's proto.Merge on the `$Properties` shape, as Istio's pkg/proto/merge does it (the merge an
 * EnvoyFilter MERGE patch applies): every field set in `src` is merged into a copy of `dst`.
 *
 * - a scalar set in src overwrites (proto3: a non-default value; a oneof member whenever present);
 *   bytes are replaced;
 * - a repeated field set in src (not empty) is appended to dst's, or replaces it with
 *   `replaceLists` (MergeWithReplaceList, the MERGE_AND_REPLACE_LIST operation), at every level;
 * - a map set in src merges by key, each src entry replacing dst's entry of that key whole;
 * - a message set in src (even empty) is merged recursively, created in dst when absent;
 *   `google.protobuf.Duration` fields are replaced whole (Istio's ReplaceMergeFn), every other
 *   well-known type merges as the message it is: a wrapper whose src value is the default (false,
 *   0, "") leaves dst's value, as in Go; an Any merges its type_url and value as fields;
 * - a oneof member set in src clears the other members of its oneof.
 *
 * Never mutates dst or src (the compiler's objects are often frozen and shared): the result is a
 * new object that shares the parts of dst src does not touch, and src's bytes and Anys it takes
 * whole. Map keys of a merged map are re-sorted (the encoder writes them in insertion order).
 */
import { compareMapKeys, messageInfo, type FieldInfo } from './descriptor-index.js';

type Msg = Record<string, unknown>;

const DURATION = 'google.protobuf.Duration';
const ANY = 'google.protobuf.Any';

/** A new message: src merged into dst as Istio's merge.Merge (or merge.MergeWithReplaceList with `replaceLists`). */
export function mergeMessage(typeName: string, dst: object, src: object, replaceLists = false): object {
  return merge(typeName, dst as Msg, src as Msg, replaceLists);
}

const own = (o: Msg, key: string): unknown => (Object.prototype.hasOwnProperty.call(o, key) ? o[key] : undefined);

function merge(typeName: string, dst: Msg | undefined, src: Msg, replaceLists: boolean): Msg {
  const info = messageInfo(typeName);
  if (!info) throw new Error(`mergeMessage: ${typeName} is not a message type meshsnap knows`);
  const out: Msg = dst ? { ...dst } : {};
  for (const f of info.fields) {
    const v = own(src, f.key);
    if (v === undefined || v === null) continue;
    if (f.mapKey) {
      const entries = Object.keys(v as Msg);
      if (entries.length === 0) continue;
      const m: Msg = { ...((own(out, f.key) as Msg | null | undefined) ?? {}) };
      for (const k of entries) m[k] = element(f, (v as Msg)[k], replaceLists);
      const sorted: Msg = {};
      for (const k of Object.keys(m).sort((a, b) => compareMapKeys(f.mapKey as string, a, b))) sorted[k] = m[k];
      out[f.key] = sorted;
    } else if (f.repeated) {
      const items = v as readonly unknown[];
      if (items.length === 0) continue;
      const base = replaceLists ? [] : [...((own(out, f.key) as readonly unknown[] | null | undefined) ?? [])];
      for (const item of items) base.push(element(f, item, replaceLists));
      out[f.key] = base;
    } else if (f.kind === 'message') {
      const current = own(out, f.key) as Msg | null | undefined;
      if (f.type === DURATION) out[f.key] = merge(DURATION, undefined, v as Msg, replaceLists);
      else if (f.type === ANY && !current)
        out[f.key] = v; // taken whole: an Any holds no message to merge into
      else out[f.key] = merge(f.type, current ?? undefined, v as Msg, replaceLists);
      clearOneof(out, info.fields, f);
    } else {
      if (f.oneof === undefined && isDefault(f, v)) continue;
      out[f.key] = v;
      clearOneof(out, info.fields, f);
    }
  }
  return out;
}

/** A list item or map value of src, as Go copies it (a message merged into a new one). */
function element(f: FieldInfo, v: unknown, replaceLists: boolean): unknown {
  if (f.kind !== 'message' || v === null || typeof v !== 'object') return v;
  if (f.type === ANY) return v;
  return merge(f.type, undefined, v as Msg, replaceLists);
}

function clearOneof(out: Msg, fields: readonly FieldInfo[], set: FieldInfo): void {
  if (set.oneof === undefined) return;
  for (const f of fields) if (f.oneof === set.oneof && f !== set) delete out[f.key];
}

/** proto3: a scalar at its default is not set (Go's Range skips it). -0 is set; so is any 64-bit value with bits. */
function isDefault(f: FieldInfo, v: unknown): boolean {
  if (typeof v === 'number') return Object.is(v, 0);
  if (typeof v === 'boolean') return !v;
  if (typeof v === 'string') return f.kind === 'enum' ? false : f.type.endsWith('64') ? /^-?0+$/.test(v) : v === '';
  if (v instanceof Uint8Array) return v.length === 0;
  if (typeof v === 'object' && v !== null && 'low' in v && 'high' in v) {
    const l = v as { low: number; high: number };
    return l.low === 0 && l.high === 0;
  }
  return false;
}

/**
 * Shared parts of the patch engine, ported from istiod's pilot/pkg/networking/core/envoyfilter/util.go
 * (list insertions, mergePatchValue), pilot/pkg/networking/util MergeAnyWithAny and
 * pilot/pkg/model ParseSubsetKey. Everything returns new values: the inputs are frozen and shared.
 */
import { codecOf, decodeMessage, packAny, type Any } from '../../xds/proto.js';
import { mergeMessage } from '../../xds/proto-merge.js';
import type { PatchContext, ResolvedPatch } from './types.js';

/** A patch's identity within a compile: its EnvoyFilter and its index there (copies and memos are keyed by it). */
export const patchId = (p: ResolvedPatch): string => `${p.source}#${p.index}`;

/** The patches of one applyTo that apply in `ctx` (istiod's commonConditionMatch: context ANY or equal). */
export function patchesFor(ctx: PatchContext, patches: readonly ResolvedPatch[], applyTo: ResolvedPatch['applyTo']) {
  return patches.filter((p) => p.applyTo === applyTo && (p.context === 'ANY' || p.context === ctx));
}

export const isMergeOperation = (op: ResolvedPatch['operation']): boolean =>
  op === 'MERGE' || op === 'MERGE_AND_REPLACE_LIST';

/** istiod's mergePatchValue: MERGE appends lists, MERGE_AND_REPLACE_LIST replaces them. */
export function mergePatchValue<T extends object>(typeName: string, p: ResolvedPatch, dst: T): T {
  if (!p.value) return dst;
  return mergeMessage(typeName, dst, p.value, p.operation === 'MERGE_AND_REPLACE_LIST') as T;
}

/**
 * istiod panics (and recovers in ApplyListenerPatches / ApplyClusterMerge) when a MERGE meets two
 * typed configs of different message types: its proto merge checks the descriptors first.
 */
export class PatchPanic extends Error {
  constructor(
    readonly patch: ResolvedPatch,
    message: string,
  ) {
    super(message);
  }
}

/** A typed config MergeAnyWithAny could not read (istiod: an error, the caller keeps the original). */
export class AnyMergeError extends Error {}

/** The message name of an Any's type URL as Go's anypb resolves it: what follows the last '/'. */
export const anyMessageName = (url: string): string => url.slice(url.lastIndexOf('/') + 1);

function unpack(any: Any): { name: string; message: object } {
  const name = anyMessageName(any.type_url ?? '');
  if (!codecOf(name)) throw new AnyMergeError(`unknown message type ${name}`);
  try {
    return { name, message: decodeMessage(name, any.value ?? new Uint8Array()) };
  } catch (e) {
    throw new AnyMergeError(`cannot decode ${name}: ${(e as Error).message}`);
  }
}

/**
 * istiod's util.MergeAnyWithAny: both unpacked, src merged into dst (Go proto.Merge, lists
 * appended), packed again. Throws AnyMergeError where istiod returns an error, PatchPanic where it
 * panics (different message types).
 */
export function mergeAnyWithAny(p: ResolvedPatch, dst: Any, src: Any): Any {
  const d = unpack(dst);
  const s = unpack(src);
  if (d.name !== s.name) throw new PatchPanic(p, `descriptor mismatch: ${d.name} != ${s.name}`);
  return packAny(d.name, mergeMessage(d.name, d.message, s.message));
}

/** `list` with `item` inserted at `index`. */
const insertAt = <E>(list: readonly E[], index: number, item: E): E[] => [
  ...list.slice(0, index),
  item,
  ...list.slice(index),
];

/** istiod's insertBeforeFunc: before the first element that matches; null when none does. */
/**
 * istiod's operations on a filter list (listener, network and HTTP filters alike): ADD appends,
 * INSERT_FIRST prepends, INSERT_AFTER / INSERT_BEFORE go next to the first filter the patch
 * matches (without a filter match in the patch: appended / first), REPLACE replaces the first match
 * and REMOVE drops every match (both only with a filter match). Any other operation (MERGE) leaves
 * the list to the caller. Returns the list itself when nothing changed.
 */
export function filterListOperation<E>(
  filters: E[],
  op: ResolvedPatch['operation'],
  value: E,
  hasMatch: boolean,
  matches: (e: E) => boolean,
): E[] {
  switch (op) {
    case 'ADD':
      return [...filters, value];
    case 'INSERT_FIRST':
      return [value, ...filters];
    case 'INSERT_AFTER':
      return hasMatch ? (insertAfter(filters, matches, value) ?? filters) : [...filters, value];
    case 'INSERT_BEFORE':
      return hasMatch ? (insertBefore(filters, matches, value) ?? filters) : [value, ...filters];
    case 'REPLACE':
      return hasMatch ? (replaceFirst(filters, matches, value) ?? filters) : filters;
    case 'REMOVE':
      return hasMatch && filters.some(matches) ? filters.filter((f) => !matches(f)) : filters;
    default:
      return filters;
  }
}

export function insertBefore<E>(list: readonly E[], matches: (e: E) => boolean, item: E): E[] | null {
  const i = list.findIndex(matches);
  return i < 0 ? null : insertAt(list, i, item);
}

/** istiod's insertAfterFunc: after the first element that matches; null when none does. */
export function insertAfter<E>(list: readonly E[], matches: (e: E) => boolean, item: E): E[] | null {
  const i = list.findIndex(matches);
  return i < 0 ? null : insertAt(list, i + 1, item);
}

/** istiod's replaceFunc: the first element that matches replaced; null when none does. */
export function replaceFirst<E>(list: readonly E[], matches: (e: E) => boolean, item: E): E[] | null {
  const i = list.findIndex(matches);
  if (i < 0) return null;
  const out = [...list];
  out[i] = item;
  return out;
}

/** Go's strconv.Atoi, 0 on error (istiod ignores the error everywhere it is used here). */
export function atoi(s: string): number {
  if (!/^[+-]?\d+$/.test(s)) return 0;
  const n = Number(s);
  return Number.isSafeInteger(n) ? n : 0;
}

export interface SubsetKey {
  readonly direction: string;
  readonly subset: string;
  readonly hostname: string;
  readonly port: number;
}

/** istiod's model.ParseSubsetKey: `dir|port|subset|hostname` (or the DNS SRV form `outbound_.port_.subset_.hostname`). */
export function parseSubsetKey(s: string): SubsetKey {
  let direction = '';
  let subset = '';
  let hostname = '';
  let port = 0;
  const sep = s.startsWith('outbound_') || s.startsWith('inbound_') ? '_.' : '|';
  const cut = (v: string): [string, string] | null => {
    const i = v.indexOf(sep);
    return i < 0 ? null : [v.slice(0, i), v.slice(i + sep.length)];
  };
  const a = cut(s);
  if (!a) return { direction, subset, hostname, port };
  direction = a[0];
  const b = cut(a[1]);
  if (!b) return { direction, subset, hostname, port };
  port = atoi(b[0]);
  const c = cut(b[1]);
  if (!c) return { direction, subset, hostname, port };
  subset = c[0];
  if (c[1].includes(sep)) return { direction, subset, hostname, port };
  hostname = c[1];
  return { direction, subset, hostname, port };
}

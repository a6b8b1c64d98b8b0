/**
 * A small structural diff of two JSON values, giving one line per changed leaf with a readable
 * path: `virtual_hosts[reviews.default.svc.cluster.local:9080].routes[0].route.timeout`.
 *
 * Why not a diff library: the paths must name list items by key where list order carries no
 * meaning (virtual hosts, weighted clusters, endpoints) and by index where it does (routes, HTTP
 * filters), which is domain knowledge the caller passes in as `keyOf`; the libraries that do keyed
 * arrays (jsondiffpatch) produce delta documents that would need their own formatter anyway, and
 * the whole job is ~80 lines.
 */
export type Json = string | number | boolean | null | Json[] | { [k: string]: Json };

export interface FieldChange {
  readonly path: string;
  readonly change: 'added' | 'removed' | 'changed';
  readonly from?: Json;
  readonly to?: Json;
}

/**
 * For a list field named `field`, the key of an item when the list's order is not semantic, or
 * undefined to compare by index.
 */
export type KeyOf = (field: string, item: Json) => string | undefined;

const isObject = (v: Json | undefined): v is { [k: string]: Json } =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

export function diffJson(
  a: Json | undefined,
  b: Json | undefined,
  keyOf: KeyOf = () => undefined,
  path = '',
): FieldChange[] {
  const out: FieldChange[] = [];
  walk(a, b, path, '', keyOf, out);
  return out;
}

function walk(
  a: Json | undefined,
  b: Json | undefined,
  path: string,
  field: string,
  keyOf: KeyOf,
  out: FieldChange[],
): void {
  if (a === undefined && b === undefined) return;
  if (a === undefined) return void out.push({ path, change: 'added', to: b as Json });
  if (b === undefined) return void out.push({ path, change: 'removed', from: a });
  if (isObject(a) && isObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    for (const k of keys) walk(a[k], b[k], path === '' ? k : `${path}.${k}`, k, keyOf, out);
    return;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    const ka = keyed(a, field, keyOf);
    const kb = keyed(b, field, keyOf);
    if (ka && kb) {
      const keys = [...new Set([...ka.keys(), ...kb.keys()])].sort();
      for (const k of keys) walk(ka.get(k), kb.get(k), `${path}[${k}]`, field, keyOf, out);
      return;
    }
    for (let i = 0; i < Math.max(a.length, b.length); i++) walk(a[i], b[i], `${path}[${i}]`, field, keyOf, out);
    return;
  }
  if (JSON.stringify(a) !== JSON.stringify(b)) out.push({ path, change: 'changed', from: a, to: b });
}

/** The list as key → item, or undefined when it is ordered or its keys are not unique. */
function keyed(list: readonly Json[], field: string, keyOf: KeyOf): Map<string, Json> | undefined {
  const m = new Map<string, Json>();
  for (const item of list) {
    const k = keyOf(field, item);
    if (k === undefined || m.has(k)) return undefined;
    m.set(k, item);
  }
  return m;
}

/** `a → b` for people. */
export function formatChange(c: FieldChange): string {
  const show = (v: Json | undefined): string => (v === undefined ? '∅' : JSON.stringify(v));
  if (c.change === 'added') return `+ ${c.path}: ${show(c.to)}`;
  if (c.change === 'removed') return `- ${c.path}: ${show(c.from)}`;
  return `~ ${c.path}: ${show(c.from)} → ${show(c.to)}`;
}

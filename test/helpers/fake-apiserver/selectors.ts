/**
 * Minimal label and field selectors: the equality forms (`k=v`, `k==v`, `k!=v`, `k`, `!k` for
 * labels; `metadata.name` / `metadata.namespace` equality for fields). Set-based forms
 * (`k in (a,b)`) and other fields are ignored, i.e. match everything.
 */
import type { KubeObject } from './store.js';

export type Predicate = (o: KubeObject) => boolean;

const ALL: Predicate = () => true;

function term(t: string, get: (o: KubeObject, key: string) => string | undefined): Predicate {
  const ne = t.indexOf('!=');
  if (ne > 0) {
    const [k, v] = [t.slice(0, ne).trim(), t.slice(ne + 2).trim()];
    return (o) => get(o, k) !== v;
  }
  const eq = t.indexOf('=');
  if (eq > 0) {
    const k = t.slice(0, eq).trim();
    const v = t.slice(t[eq + 1] === '=' ? eq + 2 : eq + 1).trim();
    return (o) => get(o, k) === v;
  }
  if (/[\s()]/.test(t)) return ALL;
  if (t.startsWith('!')) return (o) => get(o, t.slice(1).trim()) === undefined;
  return (o) => get(o, t.trim()) !== undefined;
}

function parse(
  sel: string | null,
  get: (o: KubeObject, key: string) => string | undefined,
  keep: (t: string) => boolean = () => true,
): Predicate {
  if (!sel) return ALL;
  // Commas inside `in (a,b)` would split wrongly; such terms are ignored anyway.
  const preds = sel
    .split(',')
    .filter((t) => t.trim() !== '' && keep(t.trim()))
    .map((t) => term(t, get));
  return (o) => preds.every((p) => p(o));
}

const label = (o: KubeObject, k: string): string | undefined => o.metadata.labels?.[k];

const field = (o: KubeObject, k: string): string | undefined => {
  if (k === 'metadata.name') return o.metadata.name;
  if (k === 'metadata.namespace') return o.metadata.namespace ?? '';
  return undefined;
};

export function selector(labelSelector: string | null, fieldSelector: string | null): Predicate {
  const l = parse(labelSelector, label);
  const fieldPreds = parse(fieldSelector, field, (t) => /^metadata\.(name|namespace)\s*!?=/.test(t));
  return (o) => l(o) && fieldPreds(o);
}

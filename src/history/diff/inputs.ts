/** The input objects that changed between two versions, from their stored inputs manifests. */
import { parseKeyString, type InputLayer } from '../../snapshot/stored-inputs/index.js';
import type { LayerIndex } from '../layers.js';
import { HistoryError } from '../errors.js';
import type { ObjectReader } from './resources.js';
import { diffJson, type FieldChange, type Json } from './structural.js';

export interface InputChange {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly layer: InputLayer;
  readonly change: 'added' | 'removed' | 'changed';
  /** Field-level changes of a changed object (its canonical form: server noise is not in it). */
  readonly fields?: readonly FieldChange[];
}

export async function diffInputs(a: LayerIndex, b: LayerIndex, read: ObjectReader): Promise<InputChange[]> {
  const out: InputChange[] = [];
  for (const layer of ['config', 'endpoints'] as const) {
    const la = a[layer];
    const lb = b[layer];
    for (const key of [...new Set([...la.keys(), ...lb.keys()])].sort()) {
      const da = la.get(key);
      const db = lb.get(key);
      if (da === db) continue;
      const k = parseKeyString(key) ?? { kind: key, namespace: '', name: '' };
      const base = { kind: k.kind, namespace: k.namespace, name: k.name, layer };
      if (da === undefined) out.push({ ...base, change: 'added' });
      else if (db === undefined) out.push({ ...base, change: 'removed' });
      else out.push({ ...base, change: 'changed', fields: diffJson(await load(da, read), await load(db, read)) });
    }
  }
  return out;
}

async function load(digest: string, read: ObjectReader): Promise<Json> {
  const bytes = await read(digest);
  if (!bytes) throw new HistoryError(`input object ${digest} is missing from the store`, 'internal');
  return JSON.parse(new TextDecoder().decode(bytes)) as Json;
}

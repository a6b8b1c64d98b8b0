/**
 * A version diff as JSON lines (`meshsnap diff --jsonl`): one small line per changed resource and
 * per changed input object, so a diff of two large versions is written piece by piece instead of
 * as one JSON string (which V8 caps).
 */
import type { XdsType } from '../../xds/type-urls.js';
import type { InputChange } from './inputs.js';
import type { FieldChange } from './structural.js';
import type { VersionDiff } from './version-diff.js';

export type DiffLine =
  | { readonly from: VersionDiff['from']; readonly to: VersionDiff['to']; readonly [field: string]: unknown }
  | {
      readonly classA?: string;
      readonly classB?: string;
      readonly type: XdsType;
      readonly change: 'added' | 'removed' | 'changed';
      readonly name: string;
      readonly fields?: readonly FieldChange[];
    }
  | { readonly input: InputChange };

/** `header`: extra fields of the first line (the CLI's `node`). */
export function* diffLines(d: VersionDiff, header: Readonly<Record<string, unknown>> = {}): Generator<DiffLine> {
  yield { ...header, from: d.from, to: d.to };
  for (const cls of d.classes) {
    const where = {
      ...(cls.classA !== undefined ? { classA: cls.classA } : {}),
      ...(cls.classB !== undefined ? { classB: cls.classB } : {}),
    };
    for (const [type, t] of Object.entries(cls.types) as [XdsType, NonNullable<(typeof cls.types)[XdsType]>][]) {
      for (const name of t.added) yield { ...where, type, change: 'added', name };
      for (const name of t.removed) yield { ...where, type, change: 'removed', name };
      for (const c of t.changed) yield { ...where, type, change: 'changed', name: c.name, fields: c.fields };
    }
  }
  for (const input of d.inputs ?? []) yield { input };
}

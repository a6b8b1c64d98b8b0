/**
 * The text form of a diff, for people. Classes with the very same changes are printed once
 * (a route change seen by 12 sidecar classes is one block naming the 12 classes).
 */
import type { InputChange } from './inputs.js';
import type { ClassDiff } from './resources.js';
import { formatChange } from './structural.js';
import type { VersionDiff } from './version-diff.js';

export function formatVersionDiff(d: VersionDiff): string {
  const lines = [
    `diff ${d.from.version} (${d.from.digest.slice(0, 19)}…) → ${d.to.version} (${d.to.digest.slice(0, 19)}…)`,
  ];
  if (d.classes.length === 0) lines.push('', 'no resource changes');
  const groups = new Map<string, { classes: string[]; body: string[] }>();
  for (const c of d.classes) {
    const body = classBody(c);
    const key = body.join('\n');
    const g = groups.get(key) ?? { classes: [], body };
    g.classes.push(
      c.classA === c.classB || c.classB === undefined
        ? (c.classA ?? '')
        : c.classA === undefined
          ? `${c.classB} (new)`
          : `${c.classA} → ${c.classB}`,
    );
    groups.set(key, g);
  }
  for (const g of groups.values()) {
    lines.push(
      '',
      `${g.classes.length === 1 ? 'class' : `${g.classes.length} classes`} ${g.classes.join(', ')}`,
      ...g.body,
    );
  }
  if (d.inputs) {
    lines.push('', d.inputs.length === 0 ? 'inputs: unchanged' : 'inputs:');
    for (const i of d.inputs) for (const line of inputLines(i)) lines.push(line);
  }
  return lines.join('\n');
}

function classBody(c: ClassDiff): string[] {
  const out: string[] = [];
  for (const [type, t] of Object.entries(c.types)) {
    for (const n of t.added) out.push(`  ${type} + ${n}`);
    for (const n of t.removed) out.push(`  ${type} - ${n}`);
    for (const r of t.changed) {
      out.push(`  ${type} ~ ${r.name}`);
      for (const f of r.fields) out.push(`      ${formatChange(f)}`);
    }
  }
  return out;
}

/** Kinds without a namespace; any other object stored without one was applied to `default`. */
const CLUSTER_SCOPED: ReadonlySet<string> = new Set(['Namespace', 'Node', 'MeshConfig', '~']);

function inputLines(i: InputChange): string[] {
  const namespace = i.namespace || (CLUSTER_SCOPED.has(i.kind) ? '' : 'default');
  const id = `${i.kind} ${namespace ? `${namespace}/` : ''}${i.name} [${i.layer}]`;
  const sign = i.change === 'added' ? '+' : i.change === 'removed' ? '-' : '~';
  return [`  ${sign} ${id}`, ...(i.fields ?? []).map((f) => `      ${formatChange(f)}`)];
}

/**
 * Route configs are built once per client namespace and port, so the same problem in a
 * VirtualService would be met many times: report it once per compile (per Diagnostics).
 */
import type { Diagnostic, Diagnostics } from '../../model/diagnostics.js';

const seen = new WeakMap<Diagnostics, Set<string>>();

export function reportOnce(diags: Diagnostics, d: Diagnostic): void {
  let set = seen.get(diags);
  if (!set) seen.set(diags, (set = new Set()));
  const id = `${d.severity}|${d.code}|${d.kind}|${d.namespace}|${d.name}|${d.field}|${d.message}`;
  if (set.has(id)) return;
  set.add(id);
  diags.add(d);
}

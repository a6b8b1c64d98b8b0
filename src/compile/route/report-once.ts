/**
 * Route configs are built once per client namespace and port, so the same problem in a
 * VirtualService would be met many times: report it once per compile (per Diagnostics).
 */
import type { Diagnostic, Diagnostics } from '../../model/diagnostics.js';

const seen = new WeakMap<Diagnostics, Set<string>>();

/** What makes two diagnostics the same problem reported twice. */
export const diagnosticId = (d: Diagnostic): string =>
  `${d.severity}|${d.code}|${d.kind}|${d.namespace}|${d.name}|${d.field}|${d.message}`;

export function reportOnce(diags: Diagnostics, d: Diagnostic): void {
  let set = seen.get(diags);
  if (!set) seen.set(diags, (set = new Set()));
  const id = diagnosticId(d);
  if (set.has(id)) return;
  set.add(id);
  diags.add(d);
}

/**
 * `exportTo` lists (istio pkg/config/validation: validateExportTo): `.` (own namespace), `*`
 * (every namespace), namespace names, and `~` (no namespace) only where istiod allows it; no
 * duplicates (`.` counts as the own namespace), `*` and `~` alone.
 */
import { isDns1123Label } from './meta.js';
import type { Reader } from './reader.js';

export interface ExportToRules {
  /** ServiceEntries (and the Service annotation) may say `~`. */
  readonly allowNone: boolean;
  /** A DestinationRule with a workloadSelector may only be exported to its own namespace. */
  readonly selectorRule?: boolean;
}

export function checkExportTo(
  r: Reader,
  exportTo: readonly string[] | undefined,
  path: string,
  namespace: string,
  rules: ExportToRules,
): void {
  if (!exportTo?.length) return;
  const seen = new Set<string>();
  exportTo.forEach((e, i) => {
    const key = e === '.' ? namespace : e;
    if (seen.has(key)) {
      r.error(
        `${path}[${i}]`,
        key !== e
          ? `duplicate entries in exportTo: . and current namespace ${namespace}`
          : `duplicate entries in exportTo for entry ${e.slice(0, 60)}`,
      );
      return;
    }
    if (e === '~' && !rules.allowNone) {
      r.error(`${path}[${i}]`, 'exportTo ~ (none) is not allowed for Istio configuration objects');
      return;
    }
    if (e !== '*' && e !== '~' && e !== '.' && !isDns1123Label(e)) {
      r.error(
        `${path}[${i}]`,
        `only . or * or a valid DNS 1123 label is allowed as exportTo entry, got "${e.slice(0, 60)}"`,
      );
      return;
    }
    seen.add(key);
  });
  if (rules.selectorRule && seen.size > 0) {
    if (!seen.has(namespace))
      r.error(path, 'destination rule with workload selector cannot have exportTo beyond current namespace');
    else if (seen.size > 1)
      r.error(path, 'destination rule with workload selector cannot have multiple entries in exportTo');
  }
  if (seen.has('*') && exportTo.length > 1)
    r.error(path, 'cannot have both public (*) and non-public exportTo values for a resource');
  if (seen.has('~') && exportTo.length > 1) r.error(path, 'cannot export service entry to no one (~) and someone');
}

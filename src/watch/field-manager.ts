/**
 * Who last wrote an object, as far as the API server says: Kubernetes keeps no author, but
 * server-side field management (`metadata.managedFields`) names the *manager* of each write —
 * `kubectl-client-side-apply`, `kubectl` (server-side apply), `helm`, `argocd-controller`,
 * `kube-controller-manager`, … with a time. The newest entry's manager is the best answer to
 * "who changed it" a watcher can give; a version's provenance records it per changed object.
 */
import type { Raw } from '../snapshot/stored-inputs/index.js';

/** The manager of the newest managedFields entry (ties: the later entry), or undefined when there is none. */
export function lastFieldManager(raw: Raw): string | undefined {
  const meta = raw.metadata;
  const entries = meta && typeof meta === 'object' ? (meta as Raw).managedFields : undefined;
  if (!Array.isArray(entries)) return undefined;
  let best: { manager: string; time: string } | undefined;
  for (const e of entries as unknown[]) {
    if (!e || typeof e !== 'object') continue;
    const { manager, time } = e as { manager?: unknown; time?: unknown };
    if (typeof manager !== 'string' || manager === '') continue;
    // RFC 3339 times of one server compare as strings; an entry without a time counts as oldest.
    const t = typeof time === 'string' ? time : '';
    if (!best || t >= best.time) best = { manager, time: t };
  }
  return best?.manager;
}

/** What kube-apiserver does to a status write of a Gateway API object: JSON merge patches, CRD defaults. */

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** RFC 7386 JSON merge patch. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) return patch;
  const out: Record<string, unknown> = isRecord(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

const GROUP = 'gateway.networking.k8s.io';

/**
 * The `default`s of the Gateway API CRDs' status schemas that a status write can leave out: a
 * route parent's parentRef group and kind, a listener's supported kinds' group.
 */
export function withStatusDefaults(status: unknown): unknown {
  if (!isRecord(status)) return status;
  const out = { ...status };
  if (Array.isArray(out.parents))
    out.parents = out.parents.map((p) =>
      isRecord(p) && isRecord(p.parentRef) ? { ...p, parentRef: { group: GROUP, kind: 'Gateway', ...p.parentRef } } : p,
    );
  if (Array.isArray(out.listeners))
    out.listeners = out.listeners.map((l) =>
      isRecord(l) && Array.isArray(l.supportedKinds)
        ? { ...l, supportedKinds: l.supportedKinds.map((k) => (isRecord(k) ? { group: GROUP, ...k } : k)) }
        : l,
    );
  return out;
}

/**
 * Does an object already carry the status we would write? Pure. Compared as canonical JSON after
 * filling in the defaults the Gateway API CRDs apply on write (a parentRef's group and kind, a
 * supported kind's group), so that a status the API server stored with its defaults equals the
 * one we sent without them, and an unchanged round writes nothing.
 */
import { canonicalJson } from '../../canonical-json.js';
import { GATEWAY_API_GROUP } from '../../model/gateway-api.js';
import type { Json } from './merge.js';

const isRecord = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function withDefaults(status: unknown): unknown {
  if (!isRecord(status)) return {};
  const out: Json = { ...status };
  if (Array.isArray(status.parents))
    out.parents = status.parents.map((p: unknown) =>
      isRecord(p) && isRecord(p.parentRef)
        ? { ...p, parentRef: { group: GATEWAY_API_GROUP, kind: 'Gateway', ...p.parentRef } }
        : p,
    );
  if (Array.isArray(status.listeners))
    out.listeners = status.listeners.map((l: unknown) =>
      isRecord(l) && Array.isArray(l.supportedKinds)
        ? {
            ...l,
            supportedKinds: l.supportedKinds.map((k: unknown) =>
              isRecord(k) ? { group: GATEWAY_API_GROUP, ...k } : k,
            ),
          }
        : l,
    );
  // An empty list and no list are the same status (the server may drop either).
  for (const k of ['conditions', 'listeners', 'parents', 'addresses'])
    if (Array.isArray(out[k]) && (out[k] as unknown[]).length === 0) delete out[k];
  return out;
}

export function sameStatus(a: unknown, b: unknown): boolean {
  return canonicalJson(withDefaults(a)) === canonicalJson(withDefaults(b));
}

/** ReferenceGrant (gateway.networking.k8s.io v1beta1, v1) → model/gateway-api.ts (apis/v1beta1/referencegrant_types.go). */
import type { Origin } from '../../../model/diagnostics.js';
import type { ReferenceGrant } from '../../../model/gateway-api.js';
import { fields, get, list, requiredStr, str, type Raw, type Reader } from '../reader.js';
import { readGatewayApiMeta, readSpec } from './common.js';

export function readReferenceGrant(
  r: Reader,
  raw: Raw,
  origin: Origin,
  apiVersion: string,
): ReferenceGrant | undefined {
  const meta = readGatewayApiMeta(r, raw, true);
  const spec = readSpec(r, raw, ['from', 'to']);
  if (!spec) return undefined;
  const from =
    list(
      r,
      get(spec, 'from'),
      'spec.from',
      (v, p) => {
        const o = fields(r, v, p, ['group', 'kind', 'namespace']);
        if (!o) return undefined;
        const group = str(r, get(o, 'group'), `${p}.group`);
        const kind = requiredStr(r, get(o, 'kind'), `${p}.kind`);
        const namespace = requiredStr(r, get(o, 'namespace'), `${p}.namespace`);
        if (group === undefined && get(o, 'group') == null) r.error(`${p}.group`, 'is required', 'missing-field');
        return kind === undefined || namespace === undefined ? undefined : { group: group ?? '', kind, namespace };
      },
      16,
    ) ?? [];
  const to =
    list(
      r,
      get(spec, 'to'),
      'spec.to',
      (v, p) => {
        const o = fields(r, v, p, ['group', 'kind', 'name']);
        if (!o) return undefined;
        const group = str(r, get(o, 'group'), `${p}.group`);
        const kind = requiredStr(r, get(o, 'kind'), `${p}.kind`);
        const name = str(r, get(o, 'name'), `${p}.name`);
        if (group === undefined && get(o, 'group') == null) r.error(`${p}.group`, 'is required', 'missing-field');
        return kind === undefined ? undefined : { group: group ?? '', kind, ...(name ? { name } : {}) };
      },
      16,
    ) ?? [];
  if (from.length === 0 && !r.failed) r.error('spec.from', 'must have at least one entry', 'missing-field');
  if (to.length === 0 && !r.failed) r.error('spec.to', 'must have at least one entry', 'missing-field');
  if (!meta || r.failed) return undefined;
  return { kind: 'ReferenceGrant', apiVersion, meta, origin, spec: { from, to } };
}

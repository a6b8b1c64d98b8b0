/**
 * PeerAuthentication (security.istio.io v1/v1beta1) → model/peer-authentication.ts, with the
 * webhook's checks (istio pkg/config/validation: ValidatePeerAuthentication): port-level mTLS only
 * with a workload selector, ports 1-65535, known modes. One invalid part invalidates the policy.
 */
import { workloadSelector } from './common-istio.js';
import type { Origin } from '../../model/diagnostics.js';
import type { MtlsMode, PeerAuthentication } from '../../model/peer-authentication.js';
import { readCreationTimestamp, readMeta } from './meta.js';
import { compact, fields, get, mapOf, str, type Raw, type Reader } from './reader.js';

const MODES: readonly MtlsMode[] = ['UNSET', 'DISABLE', 'PERMISSIVE', 'STRICT'];

function mtls(r: Reader, v: unknown, path: string): { mode?: MtlsMode } | undefined {
  const o = fields(r, v, path, ['mode']);
  if (!o) return undefined;
  const raw = str(r, get(o, 'mode'), `${path}.mode`);
  if (raw === undefined) return {};
  const mode = MODES.find((m) => m === raw);
  if (!mode) r.error(`${path}.mode`, `must be one of ${MODES.join(', ')}, got "${raw.slice(0, 20)}"`);
  return mode ? { mode } : undefined;
}

export function readPeerAuthentication(
  r: Reader,
  raw: Raw,
  origin: Origin,
  apiVersion: string,
): PeerAuthentication | undefined {
  const meta = readMeta(r, raw, true, 'subdomain');
  const created = readCreationTimestamp(r, raw);
  const spec = fields(r, get(raw, 'spec'), 'spec', ['selector', 'mtls', 'portLevelMtls']) ?? {};
  const selectorRaw = workloadSelector(r, get(spec, 'selector'), 'spec.selector');
  const mode = get(spec, 'mtls') === undefined ? undefined : mtls(r, get(spec, 'mtls'), 'spec.mtls');
  const portLevelMtls = mapOf(r, get(spec, 'portLevelMtls'), 'spec.portLevelMtls', (item, p) => {
    const key = p.slice(p.lastIndexOf('.') + 1);
    if (!/^\d+$/.test(key) || Number(key) < 1 || Number(key) > 65535)
      r.error(p, `port must be in range 1..65535, got "${key.slice(0, 20)}"`);
    return mtls(r, item, p);
  });
  if (
    portLevelMtls &&
    Object.keys(portLevelMtls).length > 0 &&
    Object.keys(selectorRaw?.matchLabels ?? {}).length === 0
  )
    r.error(
      'spec.portLevelMtls',
      'mesh/namespace peer authentication cannot have port level mTLS',
      'conflicting-fields',
    );
  if (!meta || r.failed) return undefined;
  return {
    kind: 'PeerAuthentication',
    apiVersion,
    meta,
    ...(created !== undefined ? { creationTimestamp: created } : {}),
    origin,
    spec: compact({
      selector: selectorRaw,
      mtls: mode,
      portLevelMtls,
    }),
  };
}

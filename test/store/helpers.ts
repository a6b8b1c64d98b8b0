/** Store test helpers: a fresh temp folder and distinct small snapshots. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSnapshot, type BuiltSnapshot } from '../../src/snapshot/build.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { INFO, cla, edsCluster, output } from '../snapshot/sample-output.js';

export const tempStoreDir = (): string => join(mkdtempSync(join(tmpdir(), 'meshsnap-store-')), '.meshsnap');

/** Snapshot number `n`: one shared cluster plus a CLA whose endpoint depends on n. */
export function nthSnapshot(n: number): BuiltSnapshot {
  const name = 'outbound|80||svc.ns.svc.cluster.local';
  const out = output(
    { c: { clusters: [edsCluster(name)] }, e: { endpoints: [cla(name, [`10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`])] } },
    [{ id: 'sidecar/ns/_', generator: 'sidecar', namespace: 'ns', services: [], groups: ['c', 'e'] }],
  );
  return buildSnapshot(out, INFO, { hasher: nodeSha256Hex });
}

export const CREATED_AT = '2025-01-01T00:00:00.000Z';

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
    {
      c: { clusters: [edsCluster(name)] },
      e: { endpoints: [cla(name, [`10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`])] },
    },
    [{ id: 'sidecar/ns/_', generator: 'sidecar', namespace: 'ns', services: [], groups: ['c', 'e'] }],
  );
  return buildSnapshot(out, INFO, { hasher: nodeSha256Hex });
}

export const CREATED_AT = '2025-01-01T00:00:00.000Z';

/**
 * A mesh of `services` services (cluster + ClusterLoadAssignment each) at revision `rev`: revision
 * r moves the endpoints of services r mod services … (r + changed - 1) mod services, so
 * consecutive revisions differ in `changed` assignments.
 */
export function meshSnapshot(services: number, rev: number, changed = 1): BuiltSnapshot {
  const clusters = [];
  const endpoints = [];
  for (let i = 0; i < services; i++) {
    const name = `outbound|80||svc${i}.ns.svc.cluster.local`;
    clusters.push(edsCluster(name));
    // Service i's endpoint shows the last revision that touched it.
    let last = 0;
    for (let r = rev; r > 0 && r > rev - services; r--) {
      const first = (r * changed) % services;
      if ((i - first + services) % services < changed) {
        last = r;
        break;
      }
    }
    endpoints.push(
      cla(name, [`10.${(i >> 8) & 255}.${i & 255}.${last % 250}`, `10.200.${(last >> 8) & 255}.${last & 255}`]),
    );
  }
  const out = output({ c: { clusters }, e: { endpoints } }, [
    { id: 'sidecar/ns/_', generator: 'sidecar', namespace: 'ns', services: [], groups: ['c', 'e'] },
  ]);
  return buildSnapshot(out, INFO, { hasher: nodeSha256Hex });
}

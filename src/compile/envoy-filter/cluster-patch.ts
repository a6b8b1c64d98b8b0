/**
 * CLUSTER patches, ported from istiod's pilot/pkg/networking/core/envoyfilter/cluster_patch.go
 * (ApplyClusterMerge per cluster, InsertedClusters). Copy on write: a cluster no patch changes is
 * returned as it came.
 */
import type { Any, Cluster, envoy } from '../../xds/proto.js';
import type { PatchContext, PatchPanicHandler, ResolvedPatch } from './types.js';
import {
  AnyMergeError,
  isMergeOperation,
  mergeAnyWithAny,
  mergePatchValue,
  parseSubsetKey,
  PatchPanic,
} from './util.js';

type TransportSocket = envoy.config.core.v3.TransportSocket.$Properties;
type TransportSocketMatch = envoy.config.cluster.v3.Cluster.TransportSocketMatch.$Properties;

const CLUSTER_TYPE = 'envoy.config.cluster.v3.Cluster';

/**
 * istiod's ApplyClusterMerge: the CLUSTER patches (already those of the context) in order; null
 * when a REMOVE matches. On a panic (typed configs of different types) istiod's recovery keeps the
 * cluster as the earlier patches left it.
 */
export function applyClusterMerge(
  patches: readonly ResolvedPatch[],
  cluster: Cluster,
  hosts: readonly string[] | undefined,
  onPanic?: PatchPanicHandler,
): Cluster | null {
  let c = cluster;
  try {
    for (const cp of patches) {
      if (cp.operation === 'REMOVE' && clusterMatch(c, cp, hosts)) return null;
      if (!isMergeOperation(cp.operation) || !clusterMatch(c, cp, hosts)) continue;
      const ts = mergeTransportSocketCluster(c, cp);
      if (ts === 'error') continue;
      c = ts === 'outer' ? mergePatchValue(CLUSTER_TYPE, cp, c) : ts;
    }
  } catch (e) {
    if (!(e instanceof PatchPanic)) throw e;
    onPanic?.(e.patch, e.message);
  }
  return c;
}

/**
 * istiod's mergeTransportSocketCluster, when the patch has a transport socket: merged into the
 * transport socket (or transport socket match's) of the same name; a cluster with transport socket
 * matches but none of that name is left alone (a transport socket besides them would be invalid);
 * without a socket of that name the patch's socket replaces the cluster's. Nothing else of the
 * patch is merged then. 'outer': no transport socket in the patch, the caller merges the value;
 * 'error': the typed configs could not be read, the patch is skipped.
 */
function mergeTransportSocketCluster(c: Cluster, cp: ResolvedPatch): Cluster | 'outer' | 'error' {
  const patchTs = (cp.value as Cluster | undefined)?.transport_socket as TransportSocket | null | undefined;
  if (!patchTs) return 'outer';
  const name = patchTs.name ?? '';
  const matches = (c.transport_socket_matches ?? []) as TransportSocketMatch[];
  let index = -1;
  let ts: TransportSocket | null | undefined;
  if (matches.length > 0) {
    index = matches.findIndex((m) => m.transport_socket && (m.transport_socket.name ?? '') === name);
    if (index < 0) return c;
    ts = matches[index]?.transport_socket;
  } else if (c.transport_socket && (c.transport_socket.name ?? '') === name) {
    ts = c.transport_socket;
  }
  if (!ts) return { ...c, transport_socket: patchTs };
  const dst = ts.typed_config as Any | null | undefined;
  const src = patchTs.typed_config as Any | null | undefined;
  if (!dst || !src) return c;
  let merged: Any;
  try {
    merged = mergeAnyWithAny(cp, dst, src);
  } catch (e) {
    if (e instanceof AnyMergeError) return 'error';
    throw e;
  }
  const socket: TransportSocket = { ...ts, typed_config: merged };
  if (index < 0) return { ...c, transport_socket: socket };
  const list = [...matches];
  list[index] = { ...matches[index], transport_socket: socket };
  return { ...c, transport_socket_matches: list };
}

/** istiod's InsertedClusters: the values of the ADDs (without a context: for sidecar outbound and gateways only). */
export function insertedClusters(ctx: PatchContext, patches: readonly ResolvedPatch[]): Cluster[] {
  const out: Cluster[] = [];
  for (const cp of patches) {
    if (cp.operation !== 'ADD') continue;
    if (cp.context === 'ANY' && ctx !== 'SIDECAR_OUTBOUND' && ctx !== 'GATEWAY') continue;
    out.push((cp.value ?? {}) as Cluster);
  }
  return out;
}

/**
 * istiod's clusterMatch: the name, or the parts of an `outbound|port|subset|host` name; an inbound
 * cluster (`inbound|port||`) matches a service by the hostnames of the services it serves (`hosts`).
 */
export function clusterMatch(c: Cluster, cp: ResolvedPatch, hosts: readonly string[] | undefined): boolean {
  const m = cp.cluster;
  if (!m) return true;
  if (m.name) return m.name === (c.name ?? '');
  const key = parseSubsetKey(c.name ?? '');
  const hostMatches = key.direction === 'inbound' && hosts && hosts.length > 0 ? hosts : [key.hostname];
  if (m.subset && m.subset !== key.subset) return false;
  if (m.service && !hostMatches.includes(m.service)) return false;
  if (m.portNumber && m.portNumber !== key.port) return false;
  return true;
}

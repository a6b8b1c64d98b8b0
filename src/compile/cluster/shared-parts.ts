/**
 * A cluster's settings that recur across clusters (timeouts, circuit breakers, outlier detection,
 * load-balancer settings, bind config), swapped for their shared copies (see ../intern.ts).
 */
import type { Cluster } from '../../xds/proto.js';
import { InternTable } from '../intern.js';

/** Fields whose values are plain JSON (no bytes) and repeat across clusters. */
const SHARED_FIELDS = [
  'connect_timeout',
  'circuit_breakers',
  'outlier_detection',
  'common_lb_config',
  'cleanup_interval',
  'ring_hash_lb_config',
  'upstream_bind_config',
  'dns_refresh_rate',
  'original_dst_lb_config',
] as const satisfies readonly (keyof Cluster)[];

const tables = new Map<string, InternTable<object>>(SHARED_FIELDS.map((f) => [f, new InternTable<object>()]));

/** An empty `common_lb_config`, as most clusters have. */
export const NO_LB_CONFIG: NonNullable<Cluster['common_lb_config']> = Object.freeze({});

/** The one copy of a value of a shared field (deep-frozen: shareClusterParts leaves it as it is). */
export function sharedPart<F extends (typeof SHARED_FIELDS)[number]>(
  field: F,
  value: NonNullable<Cluster[F]>,
): NonNullable<Cluster[F]> {
  return (tables.get(field) as InternTable<object>).share(value) as NonNullable<Cluster[F]>;
}

/** The cluster, with each shared field pointing at the one copy of its value. Call once the cluster is complete. */
export function shareClusterParts(c: Cluster): Cluster {
  const fields = c as Record<string, unknown>;
  // Indexed: a for…of here allocated an iterator result per field (the loop runs per cluster).
  for (let i = 0; i < SHARED_FIELDS.length; i++) {
    const f = SHARED_FIELDS[i] as (typeof SHARED_FIELDS)[number];
    const v = fields[f];
    // A frozen value is shared already: a deep-frozen constant, or interned where it was made.
    if (v !== undefined && v !== null && !Object.isFrozen(v))
      fields[f] = (tables.get(f) as InternTable<object>).share(v as object);
  }
  return c;
}

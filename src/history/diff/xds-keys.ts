/**
 * Which repeated Envoy fields are unordered, and how their items are named. Everything not listed
 * is compared by index, because order matters there: routes within a virtual host (first match
 * wins), HTTP and listener filters (a chain), transport socket matches (first match wins).
 */
import type { Json, KeyOf } from './structural.js';

const str = (v: Json | undefined): string | undefined => (typeof v === 'string' ? v : undefined);
const obj = (v: Json | undefined): Record<string, Json> | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? v : undefined;

export const xdsKeyOf: KeyOf = (field, item) => {
  const o = obj(item);
  switch (field) {
    case 'virtual_hosts': // RouteConfiguration: matched by domain, not order
    case 'clusters': // WeightedCluster.clusters: weights, not order
      return str(o?.name);
    case 'domains': // a set
      return str(item);
    case 'filter_chains': // matched by filter_chain_match specificity
      return str(o?.name) ?? (o ? JSON.stringify(o.filter_chain_match ?? {}) : undefined);
    case 'endpoints': {
      // ClusterLoadAssignment.endpoints: one LocalityLbEndpoints per locality and priority
      const loc = obj(o?.locality);
      return o
        ? `${str(loc?.region) ?? ''}/${str(loc?.zone) ?? ''}/${str(loc?.sub_zone) ?? ''}#${String(o.priority ?? 0)}`
        : undefined;
    }
    case 'lb_endpoints': {
      const sock = obj(obj(obj(o?.endpoint)?.address)?.socket_address);
      return sock ? `${str(sock.address) ?? ''}:${String(sock.port_value ?? '')}` : undefined;
    }
    default:
      return undefined;
  }
};

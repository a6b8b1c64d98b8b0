/** The clusters a request ends at, with their endpoints (from the served CLAs) and provenance. Pure. */
import { num, obj, objects, str, type JsonObject } from './json.js';
import type { WeightedTarget } from './network-filters.js';
import { provenanceOf } from './provenance.js';
import type { ClusterAnswer, EndpointAnswer, ProxyResources } from './types.js';

function localityOf(l: JsonObject | undefined): string | undefined {
  if (!l) return undefined;
  const parts = [str(l.region), str(l.zone), str(l.sub_zone)].filter((p) => p !== undefined && p !== '');
  return parts.length ? parts.join('/') : undefined;
}

/** The endpoints of a ClusterLoadAssignment, by locality and priority. */
export function endpointsOf(cla: JsonObject): EndpointAnswer[] {
  const out: EndpointAnswer[] = [];
  for (const group of objects(cla.endpoints)) {
    const locality = localityOf(obj(group.locality));
    const priority = num(group.priority);
    for (const lb of objects(group.lb_endpoints)) {
      const sa = obj(obj(obj(lb.endpoint)?.address)?.socket_address);
      const pipe = str(obj(obj(obj(lb.endpoint)?.address)?.pipe)?.path);
      const address = str(sa?.address) ?? pipe ?? '';
      const port = num(sa?.port_value);
      const health = str(lb.health_status);
      const weight = num(lb.load_balancing_weight);
      out.push({
        address,
        ...(port !== undefined ? { port } : {}),
        ...(locality !== undefined ? { locality } : {}),
        ...(health !== undefined ? { health } : {}),
        ...(weight !== undefined ? { weight } : {}),
        ...(priority !== undefined && priority > 0 ? { priority } : {}),
      });
    }
  }
  return out;
}

function servicesOf(cluster: JsonObject): string[] {
  const services = obj(obj(obj(cluster.metadata)?.filter_metadata)?.istio)?.services;
  return objects(services)
    .map((s) => str(s.host))
    .filter((h): h is string => h !== undefined);
}

export function clusterAnswer(
  target: WeightedTarget,
  resources: ProxyResources,
  originalDestination: string,
): ClusterAnswer {
  const cluster = resources.clusters.get(target.name);
  if (!cluster)
    return {
      name: target.name,
      weight: target.weight,
      found: false,
      provenance: [],
      services: [],
      endpoints: [],
      endpointsFrom: 'none',
    };
  const type = str(cluster.type) ?? (cluster.cluster_type !== undefined ? 'custom' : 'STATIC');
  const common = {
    name: target.name,
    weight: target.weight,
    found: true,
    type,
    provenance: provenanceOf(cluster.metadata),
    services: servicesOf(cluster),
  };
  if (type === 'EDS') {
    const claName = str(obj(cluster.eds_cluster_config)?.service_name) ?? target.name;
    const cla = resources.endpoints.get(claName);
    return { ...common, endpoints: cla ? endpointsOf(cla) : [], endpointsFrom: 'eds' };
  }
  if (type === 'ORIGINAL_DST') {
    const colon = originalDestination.lastIndexOf(':');
    // `upstream_port_override` keeps the original address and replaces its port.
    const port = num(obj(cluster.original_dst_lb_config)?.upstream_port_override);
    return {
      ...common,
      endpoints: [
        { address: originalDestination.slice(0, colon), port: port ?? Number(originalDestination.slice(colon + 1)) },
      ],
      endpointsFrom: 'original_destination',
    };
  }
  const assignment = obj(cluster.load_assignment);
  return {
    ...common,
    endpoints: assignment ? endpointsOf(assignment) : [],
    endpointsFrom: assignment ? 'load_assignment' : 'none',
  };
}

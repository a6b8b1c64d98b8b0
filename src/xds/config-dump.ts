/**
 * Envoy's `/config_dump` shape for the resources a proxy is served, so that `meshsnap show`
 * output can be compared with what `istioctl proxy-config … -o json` prints for a real proxy.
 */
import { resourceToJson } from './json.js';
import { XDS_TYPE_NAME, type XdsType } from './type-urls.js';

type Json = ReturnType<typeof resourceToJson>;

export interface ServedResource {
  readonly name: string;
  readonly bytes: Uint8Array;
}

const DUMP_TYPE: Readonly<Record<XdsType, string>> = {
  clusters: 'type.googleapis.com/envoy.admin.v3.ClustersConfigDump',
  endpoints: 'type.googleapis.com/envoy.admin.v3.EndpointsConfigDump',
  listeners: 'type.googleapis.com/envoy.admin.v3.ListenersConfigDump',
  routes: 'type.googleapis.com/envoy.admin.v3.RoutesConfigDump',
};

/** Envoy orders config_dump sections bootstrap, clusters, endpoints, listeners, routes; so do we. */
export function configDump(
  versionInfo: string,
  served: Partial<Record<XdsType, readonly ServedResource[]>>,
): { configs: Json[] } {
  const configs: Json[] = [];
  for (const type of ['clusters', 'endpoints', 'listeners', 'routes'] as const) {
    const resources = served[type];
    if (!resources) continue;
    configs.push(section(type, versionInfo, resources));
  }
  return { configs };
}

function section(type: XdsType, versionInfo: string, resources: readonly ServedResource[]): Json {
  const typeName = XDS_TYPE_NAME[type];
  const render = (r: ServedResource) => resourceToJson(typeName, r.bytes);
  switch (type) {
    case 'clusters':
      return {
        '@type': DUMP_TYPE.clusters,
        version_info: versionInfo,
        dynamic_active_clusters: resources.map((r) => ({ version_info: versionInfo, cluster: render(r) })),
      };
    case 'endpoints':
      return {
        '@type': DUMP_TYPE.endpoints,
        dynamic_endpoint_configs: resources.map((r) => ({ version_info: versionInfo, endpoint_config: render(r) })),
      };
    case 'listeners':
      return {
        '@type': DUMP_TYPE.listeners,
        version_info: versionInfo,
        dynamic_listeners: resources.map((r) => ({
          name: r.name,
          active_state: { version_info: versionInfo, listener: render(r) },
        })),
      };
    case 'routes':
      return {
        '@type': DUMP_TYPE.routes,
        dynamic_route_configs: resources.map((r) => ({ version_info: versionInfo, route_config: render(r) })),
      };
  }
}

/**
 * The EnvoyFilter benchmark: the synthetic mesh with three root-namespace EnvoyFilters of the kinds
 * meshes carry (a Lua filter before every inbound router, a MERGE of every outbound cluster, an
 * HCM MERGE of every outbound HTTP connection manager) next to the same mesh without them
 * (./config-variant.ts measures both and writes bench-results/envoy-filters.json).
 *
 *   node --expose-gc dist/bench/run.js --envoy-filters [--sizes 1000]
 */
import type { RawDocument } from '../src/inputs/parse.js';

const ROUTER_MATCH = {
  context: 'SIDECAR_INBOUND',
  listener: {
    filterChain: {
      filter: {
        name: 'envoy.filters.network.http_connection_manager',
        subFilter: { name: 'envoy.filters.http.router' },
      },
    },
  },
};

/** Three root-namespace EnvoyFilters every sidecar gets. */
export function envoyFilterDocuments(): RawDocument[] {
  const ef = (name: string, configPatches: unknown[]) => ({
    apiVersion: 'networking.istio.io/v1alpha3',
    kind: 'EnvoyFilter',
    metadata: { name, namespace: 'istio-system' },
    spec: { configPatches },
  });
  return [
    ef('lua-inbound', [
      {
        applyTo: 'HTTP_FILTER',
        match: ROUTER_MATCH,
        patch: {
          operation: 'INSERT_BEFORE',
          value: {
            name: 'envoy.lua',
            typed_config: {
              '@type': 'type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua',
              inlineCode: 'function envoy_on_request(h) h:headers():add("x-bench", "1") end',
            },
          },
        },
      },
    ]),
    ef('outbound-clusters', [
      {
        applyTo: 'CLUSTER',
        match: { context: 'SIDECAR_OUTBOUND' },
        patch: { operation: 'MERGE', value: { per_connection_buffer_limit_bytes: 65536 } },
      },
    ]),
    ef('outbound-hcm', [
      {
        applyTo: 'NETWORK_FILTER',
        match: {
          context: 'SIDECAR_OUTBOUND',
          listener: { filterChain: { filter: { name: 'envoy.filters.network.http_connection_manager' } } },
        },
        patch: {
          operation: 'MERGE',
          value: {
            typed_config: {
              '@type':
                'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
              common_http_protocol_options: { idle_timeout: '30s' },
            },
          },
        },
      },
    ]),
  ].map((object, index) => ({ file: 'envoy-filters.yaml', index, object }));
}

/**
 * A sidecar and an ingress gateway compiled with a mesh ConfigMap, and the parts of what they are
 * served that MeshConfig settings reach: the HCMs of the sidecar's virtualInbound and 0.0.0.0_80
 * listeners and of the gateway's 0.0.0.0_80 listener, the routes of both. For tests of MeshConfig
 * fields istiod turns into xDS (test/compile/proxy-headers.test.ts and others).
 */
import { compileTexts, type PipelineResult } from '../../src/pipeline.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { gatewayYaml, INGRESS_NODE, MESH_YAML } from './gateway-sim.js';
import { served } from './mesh.js';

export const SIDECAR = {
  id: 'sidecar~10.244.1.5~web-1.default~default.svc.cluster.local',
  metadata: { NAMESPACE: 'default', LABELS: { app: 'web' } },
};

export const WORKLOADS = `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {clusterIP: 10.96.40.1, selector: {app: web}, ports: [{name: http, port: 8000}]}
---
apiVersion: v1
kind: Pod
metadata: {name: web-1, namespace: default, labels: {app: web}}
spec: {containers: [{name: app, ports: [{containerPort: 8000}]}]}
status: {phase: Running, podIP: 10.244.1.5, podIPs: [{ip: 10.244.1.5}], conditions: [{type: Ready, status: "True"}]}
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: a, namespace: default}
spec:
  hosts: [a.default.svc.cluster.local]
  http: [{rewrite: {uri: /v2}, route: [{destination: {host: a.default.svc.cluster.local}}]}]
${gatewayYaml('gw', 'istio-system', 'port: {number: 80, name: http, protocol: HTTP}\nhosts: ["*"]')}
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: gw-a, namespace: istio-system}
spec:
  hosts: ["*"]
  gateways: [gw]
  http: [{route: [{destination: {host: a.default.svc.cluster.local}}]}]
`;

export const meshConfigMap = (mesh: string): string => `---
apiVersion: v1
kind: ConfigMap
metadata: {name: istio, namespace: istio-system}
data:
  mesh: |
${mesh
  .trim()
  .split('\n')
  .map((l) => `    ${l}`)
  .join('\n')}
`;

export function compile(mesh = ''): PipelineResult {
  return compileTexts([{ file: 'mesh.yaml', text: MESH_YAML + WORKLOADS + (mesh ? meshConfigMap(mesh) : '') }], {
    hasher: nodeSha256Hex,
  });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- walks decoded resource JSON
export type Json = Record<string, any>;

/** The typed configs of the HCMs in a listener, by filter chain name (or index). */
export function hcms(listener: Json): Json[] {
  return (listener.filter_chains ?? []).flatMap((c: Json) =>
    (c.filters ?? [])
      .filter((f: Json) => f.name === 'envoy.filters.network.http_connection_manager')
      .map((f: Json) => f.typed_config),
  );
}

export function views(result: PipelineResult) {
  const sidecar = served(result, SIDECAR).resources;
  const gateway = served(result, INGRESS_NODE).resources;
  const inbound = hcms(sidecar.listeners.get('virtualInbound') as Json);
  const outbound = hcms(sidecar.listeners.get('0.0.0.0_80') as Json);
  const gatewayListener = gateway.listeners.get('0.0.0.0_80') as Json;
  return {
    inbound,
    outbound,
    gateway: hcms(gatewayListener),
    gatewayListener,
    sidecarRoutes: sidecar.routes.get('80') as Json,
    gatewayRoutes: gateway.routes.get('http.80') as Json,
  };
}

export const router = (hcm: Json): Json =>
  (hcm.http_filters as Json[]).find((f) => f.name === 'envoy.filters.http.router')?.typed_config ?? {};

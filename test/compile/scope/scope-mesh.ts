/**
 * The mesh of istiod's TestSidecarRoutes (pilot/pkg/networking/core/sidecar_simulation_test.go):
 * `known` and `alt-known` in `default`, `not-default` in `not-default`, each HTTP on 80 and
 * 8080; plus helpers to compile it with extra objects and look at what a sidecar is served.
 */
import { compileTexts, type PipelineResult } from '../../../src/pipeline.js';
import { nodeSha256Hex } from '../../../src/snapshot/store/local.js';
import { served, type TestNode } from '../../helpers/mesh.js';

const service = (name: string, ns: string, ip: string, extra = ''): string => `apiVersion: v1
kind: Service
metadata: {name: ${name}, namespace: ${ns}${extra}}
spec:
  clusterIP: ${ip}
  ports: [{port: 80, name: http}, {port: 8080, name: http-alt}]`;

export const KNOWN_SERVICES = [
  service('known', 'default', '2.0.0.0'),
  service('alt-known', 'default', '2.0.0.1'),
  service('not-default', 'not-default', '2.0.0.2'),
].join('\n---\n');

export function compileMesh(...docs: string[]): PipelineResult {
  const result = compileTexts([{ file: 'mesh.yaml', text: [KNOWN_SERVICES, ...docs].join('\n---\n') }], {
    hasher: nodeSha256Hex,
  });
  return result;
}

export const proxy = (ns: string, labels: Record<string, string> = {}): TestNode => ({
  id: `sidecar~10.1.0.1~pod.${ns}~${ns}.svc.cluster.local`,
  metadata: { NAMESPACE: ns, LABELS: labels },
});

/** The sidecar's view: cluster names, and per route config the virtual hosts' names → their first route's cluster. */
export function view(result: PipelineResult, node: TestNode) {
  const { classId, resources } = served(result, node);
  const routes: Record<string, Record<string, string | undefined>> = {};
  for (const [name, rc] of resources.routes) {
    const vhosts: Record<string, string | undefined> = {};
    for (const vh of (rc.virtual_hosts ?? []) as { name: string; routes: { route?: { cluster?: string } }[] }[])
      vhosts[vh.name] = vh.routes[0]?.route?.cluster;
    routes[name] = vhosts;
  }
  return {
    classId,
    clusters: [...resources.clusters.keys()].filter((n) => n.startsWith('outbound|')),
    listeners: [...resources.listeners.keys()],
    routes,
    resources,
  };
}

/** A running, ready Pod of `ns` at `ip`; `labels` as YAML flow text, e.g. `{app: web}`. */
export const pod = (ns: string, name: string, ip: string, labels: string): string => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: ${ns}, labels: ${labels}}
spec: {serviceAccountName: default, containers: [{name: app, image: app}]}
status: {phase: Running, podIP: ${ip}, podIPs: [{ip: ${ip}}], conditions: [{type: Ready, status: 'True'}]}`;

export const sidecar = (ns: string, spec: string, name = 'default'): string => `apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: ${name}, namespace: ${ns}}
spec: ${spec}`;

/** A VirtualService of `ns` for `host`; `destination` as YAML flow text, e.g. `{host: a, port: {number: 80}}`. */
export const virtualService = (ns: string, name: string, host: string, destination: string): string =>
  `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: ${name}, namespace: ${ns}}
spec: {hosts: [${host}], http: [{route: [{destination: ${destination}}]}]}`;

export { service };

/**
 * `web` (2.0.0.7) selecting the pod `web-1` at 10.1.0.1, the address `proxy()` connects from:
 * port 80 (http) to 9080, port 81 (no protocol: sniffed) to 9081.
 */
export const WEB = [
  service('web', 'default', '2.0.0.7', ', labels: {app: web}').replace(
    'ports: [{port: 80, name: http}, {port: 8080, name: http-alt}]',
    'selector: {app: web}\n  ports: [{port: 80, name: http, targetPort: 9080}, {port: 81, targetPort: 9081}]',
  ),
  pod('default', 'web-1', '10.1.0.1', '{app: web}'),
].join('\n---\n');

/** A VirtualService `known` in `default` for host `known` with these `http` routes (indented YAML list). */
export const knownVirtualService = (http: string): string => `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: known, namespace: default}
spec:
  hosts: [known]
  http:
${http}`;

/** The routes of known's virtual host in route config `80`, as served to a sidecar of `default`. */
export function knownRoutes(result: PipelineResult): Record<string, unknown>[] {
  const config = view(result, proxy('default')).resources.routes.get('80') as {
    virtual_hosts: { name: string; routes: Record<string, unknown>[] }[];
  };
  return config.virtual_hosts.find((h) => h.name === 'known.default.svc.cluster.local:80')?.routes ?? [];
}

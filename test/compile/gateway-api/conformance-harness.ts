/**
 * The Gateway API conformance suite's base (conformance/base/manifests.yaml), restated for
 * meshsnap: the infra and backend namespaces, the backend Services with a ready pod each, the
 * `same-namespace`, `all-namespaces` and `backend-namespaces` Gateways, and for every Gateway a
 * gateway pod labelled `gateway.networking.k8s.io/gateway-name` (as Istio's automated deployment
 * labels them) fronted by a Service. A test adds its manifests, compiles, and asks `explain` where
 * a request to a Gateway goes.
 */
import { explain, type Explanation } from '../../../src/explain/index.js';
import { compileTexts, type PipelineResult } from '../../../src/pipeline.js';
import { nodeSha256Hex } from '../../../src/snapshot/store/local.js';
import type { Diagnostic } from '../../../src/model/diagnostics.js';
import type { ObjectStatus, RouteStatus } from '../../../src/model/object-status.js';
import { served } from '../../helpers/mesh.js';

export const INFRA = 'gateway-conformance-infra';
export const APP = 'gateway-conformance-app-backend';
export const WEB = 'gateway-conformance-web-backend';

const service = (name: string, ns: string, ip: number, ports = [8080]) => `---
apiVersion: v1
kind: Service
metadata: {name: ${name}, namespace: ${ns}}
spec:
  clusterIP: 10.96.1.${ip}
  selector: {app: ${name}}
  ports: [${ports.map((p, i) => `{name: port-${i}, port: ${p}, appProtocol: ${p === 9000 ? 'grpc' : 'http'}}`).join(', ')}]
---
apiVersion: v1
kind: Pod
metadata: {name: ${name}-0, namespace: ${ns}, labels: {app: ${name}}}
spec: {containers: [{name: c, ports: [{containerPort: 8080}]}]}
status: {phase: Running, podIP: 10.244.1.${ip}, podIPs: [{ip: 10.244.1.${ip}}], conditions: [{type: Ready, status: "True"}]}
`;

/** A gateway pod and the Service fronting it, for a Gateway named `gateway` in `ns`. */
export function gatewayPod(gateway: string, ns: string, ip: number, ports: readonly number[] = [80]): string {
  return `---
apiVersion: v1
kind: Pod
metadata: {name: ${gateway}-istio-0, namespace: ${ns}, labels: {gateway.networking.k8s.io/gateway-name: ${gateway}}}
spec: {containers: [{name: istio-proxy, ports: [${ports.map((p) => `{containerPort: ${p}}`).join(', ')}]}]}
status: {phase: Running, podIP: 10.244.9.${ip}, podIPs: [{ip: 10.244.9.${ip}}], conditions: [{type: Ready, status: "True"}]}
---
apiVersion: v1
kind: Service
metadata: {name: ${gateway}-istio, namespace: ${ns}}
spec:
  clusterIP: 10.96.9.${ip}
  selector: {gateway.networking.k8s.io/gateway-name: ${gateway}}
  ports: [${ports.map((p) => `{name: p${p}, port: ${p}}`).join(', ')}]
`;
}

export const BASE = `
apiVersion: v1
kind: Namespace
metadata: {name: ${INFRA}, labels: {gateway-conformance: infra}}
---
apiVersion: v1
kind: Namespace
metadata: {name: ${APP}, labels: {gateway-conformance: backend}}
---
apiVersion: v1
kind: Namespace
metadata: {name: ${WEB}, labels: {gateway-conformance: backend}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: istio}
spec: {controllerName: istio.io/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: same-namespace, namespace: ${INFRA}}
spec:
  gatewayClassName: istio
  listeners:
  - {name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: Same}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: all-namespaces, namespace: ${INFRA}}
spec:
  gatewayClassName: istio
  listeners:
  - {name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: backend-namespaces, namespace: ${INFRA}}
spec:
  gatewayClassName: istio
  listeners:
  - name: http
    port: 80
    protocol: HTTP
    allowedRoutes: {namespaces: {from: Selector, selector: {matchLabels: {gateway-conformance: backend}}}}
${service('infra-backend-v1', INFRA, 1, [8080, 8081, 8082])}${service('infra-backend-v2', INFRA, 2)}${service('infra-backend-v3', INFRA, 3)}${service('app-backend-v1', APP, 4)}${service('app-backend-v2', APP, 5)}${service('web-backend', WEB, 6)}${service('grpc-infra-backend-v1', INFRA, 7, [9000])}${service('grpc-infra-backend-v2', INFRA, 8, [9000])}${service('grpc-infra-backend-v3', INFRA, 9, [9000])}${gatewayPod('same-namespace', INFRA, 1)}${gatewayPod('all-namespaces', INFRA, 2)}${gatewayPod('backend-namespaces', INFRA, 3)}`;

export function compileConformance(...manifests: string[]): PipelineResult {
  return compileTexts(
    [{ file: 'base.yaml', text: BASE }, ...manifests.map((text, i) => ({ file: `test-${i}.yaml`, text }))],
    { hasher: nodeSha256Hex },
  );
}

/** The router node of a Gateway's pod (gatewayPod's naming). */
export function gatewayNode(gateway: string, ns = INFRA, ip = 1) {
  return {
    id: `router~10.244.9.${ip}~${gateway}-istio-0.${ns}~${ns}.svc.cluster.local`,
    metadata: { NAMESPACE: ns, LABELS: { 'gateway.networking.k8s.io/gateway-name': gateway } },
  };
}

export interface Request {
  readonly host: string;
  readonly path: string;
  readonly port?: number;
  readonly method?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly protocol?: 'http/1.1' | 'h2c';
}

export interface Sent {
  readonly explanation: Explanation;
  /** The Envoy route that matched, as served (config_dump JSON), if any. */
  readonly route?: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- config_dump JSON
}

/** Where a request to the Gateway's pods goes. */
export function send(result: PipelineResult, gateway: string, req: Request, ns = INFRA): Sent {
  const proxy = served(result, gatewayNode(gateway, ns));
  const explanation = explain(proxy.resources, {
    direction: 'outbound',
    host: req.host,
    port: req.port ?? 80,
    protocol: req.protocol ?? 'http/1.1',
    tls: false,
    method: req.method ?? 'GET',
    path: req.path,
    headers: Object.fromEntries(Object.entries(req.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v])),
  });
  const rc = explanation.routeConfig && proxy.resources.routes.get(explanation.routeConfig.name);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- config_dump JSON
  const vh = (rc?.virtual_hosts as any[] | undefined)?.find((v) => v.name === explanation.virtualHost?.name);
  const route = explanation.route ? vh?.routes?.[explanation.route.index] : undefined;
  return { explanation, ...(route ? { route } : {}) };
}

/** The backend Service a request reaches (`<name>` of `<name>.<ns>.svc.cluster.local`), or the status Envoy answers. */
export function outcome(sent: Sent): string {
  const e = sent.explanation;
  if (e.outcome === 'routed') {
    const names = e.clusters.filter((c) => c.weight > 0).map((c) => c.name.split('|')[3]?.split('.')[0] ?? c.name);
    return names.join(',');
  }
  if (e.status !== undefined) return String(e.status);
  return e.outcome;
}

/** The status diagnostic of an object. */
export function statusOf(
  result: PipelineResult,
  kind: string,
  namespace: string,
  name: string,
): ObjectStatus | undefined {
  const d = result.diagnostics.find(
    (x: Diagnostic) =>
      x.code === 'gateway-api-status' && x.kind === kind && (x.namespace ?? '') === namespace && x.name === name,
  );
  return d?.status;
}

/** A route's condition on its first parent: `Accepted=True (Accepted)`. */
export function routeCondition(result: PipelineResult, kind: string, ns: string, name: string, type: string): string {
  const status = statusOf(result, kind, ns, name) as RouteStatus | undefined;
  const c = status?.parents[0]?.conditions.find((x) => x.type === type);
  return c ? `${c.type}=${c.status} (${c.reason})` : 'none';
}

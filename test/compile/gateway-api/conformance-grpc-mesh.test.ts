/**
 * GRPCRoute matching (conformance/tests/grpcroute-exact-method-matching, grpcroute-header-matching)
 * on a Gateway, GAMMA routes (conformance/tests/mesh-*: an HTTPRoute whose parent is a Service)
 * seen from a sidecar, and TLS listeners: certificateRefs → SDS names, cross-namespace secrets only
 * with a ReferenceGrant (gateway-secret-*-reference-grant).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { explain } from '../../../src/explain/index.js';
import type { GatewayStatus, RouteStatus } from '../../../src/model/object-status.js';
import { served } from '../../helpers/mesh.js';
import {
  compileConformance,
  gatewayNode,
  gatewayPod,
  INFRA,
  outcome,
  routeCondition,
  send,
  statusOf,
  WEB,
} from './conformance-harness.js';

const SERVICE = 'gateway_api_conformance.echo_basic.grpc_echo.GrpcEcho';

const grpc = (path: string, headers: Record<string, string> = {}) => ({
  host: 'grpc.example.com',
  path,
  method: 'POST',
  protocol: 'h2c' as const,
  headers: { 'content-type': 'application/grpc', ...headers },
});

test('GRPCRouteExactMethodMatching and GRPCRouteHeaderMatching on a Gateway', () => {
  const result = compileConformance(`---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: exact-matching, namespace: ${INFRA}}
spec:
  parentRefs: [{name: same-namespace}]
  hostnames: [grpc.example.com]
  rules:
  - matches: [{method: {service: ${SERVICE}, method: Echo}}]
    backendRefs: [{name: grpc-infra-backend-v1, port: 9000}]
  - matches: [{method: {service: ${SERVICE}, method: EchoTwo}}]
    backendRefs: [{name: grpc-infra-backend-v2, port: 9000}]
  - matches: [{method: {method: EchoThree}, headers: [{name: version, value: three}]}]
    backendRefs: [{name: grpc-infra-backend-v3, port: 9000}]
  - matches: [{method: {type: RegularExpression, service: ".*Echo", method: "Echo[A-Z]+"}}]
    backendRefs: [{name: grpc-infra-backend-v3, port: 9000}]
`);
  const to = (path: string, headers?: Record<string, string>) =>
    outcome(send(result, 'same-namespace', grpc(path, headers)));
  assert.equal(to(`/${SERVICE}/Echo`), 'grpc-infra-backend-v1');
  assert.equal(to(`/${SERVICE}/EchoTwo`), 'grpc-infra-backend-v2');
  assert.equal(to(`/${SERVICE}/EchoThree`, { version: 'three' }), 'grpc-infra-backend-v3');
  assert.equal(to(`/other.Service/EchoThree`, { version: 'three' }), 'grpc-infra-backend-v3');
  assert.equal(to(`/${SERVICE}/EchoFOUR`), 'grpc-infra-backend-v3');
  assert.equal(to(`/${SERVICE}/Other`), '404');
  assert.equal(routeCondition(result, 'GRPCRoute', INFRA, 'exact-matching', 'Accepted'), 'Accepted=True (Accepted)');
  const gw = statusOf(result, 'Gateway', INFRA, 'same-namespace') as GatewayStatus;
  assert.equal(gw.listeners[0]?.attachedRoutes, 1);
});

test('GRPCRouteWeight: weighted gRPC backends', () => {
  const result = compileConformance(`---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: weighted, namespace: ${INFRA}}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
  - backendRefs:
    - {name: grpc-infra-backend-v1, port: 9000, weight: 70}
    - {name: grpc-infra-backend-v2, port: 9000, weight: 30}
`);
  const e = send(result, 'same-namespace', grpc(`/${SERVICE}/Echo`)).explanation;
  assert.deepEqual(
    e.clusters.map((c) => [c.name.split('|')[3]?.split('.')[0], c.weight]),
    [
      ['grpc-infra-backend-v1', 70],
      ['grpc-infra-backend-v2', 30],
    ],
  );
});

const SIDECAR = {
  id: `sidecar~10.244.1.2~infra-backend-v2-0.${INFRA}~${INFRA}.svc.cluster.local`,
  metadata: { NAMESPACE: INFRA, LABELS: { app: 'infra-backend-v2' } },
};

test('GAMMA: an HTTPRoute whose parent is a Service routes the sidecars calling it (MeshHTTPRouteMatching, MeshHTTPRouteWeight)', () => {
  const result = compileConformance(`---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: mesh-split, namespace: ${INFRA}, generation: 4}
spec:
  parentRefs: [{group: "", kind: Service, name: infra-backend-v3, port: 8080}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /v1}}]
    backendRefs: [{name: infra-backend-v1, port: 8080}]
  - matches: [{headers: [{name: version, value: two}]}]
    backendRefs: [{name: infra-backend-v2, port: 8080}]
  - backendRefs:
    - {name: infra-backend-v1, port: 8080, weight: 50}
    - {name: infra-backend-v3, port: 8080, weight: 50}
`);
  const proxy = served(result, SIDECAR);
  const call = (path: string, headers: Record<string, string> = {}) =>
    explain(proxy.resources, {
      direction: 'outbound',
      host: `infra-backend-v3.${INFRA}.svc.cluster.local`,
      destinationIp: '10.96.1.3',
      port: 8080,
      protocol: 'http/1.1',
      tls: false,
      method: 'GET',
      path,
      headers,
    });
  const backends = (path: string, headers?: Record<string, string>) => outcome({ explanation: call(path, headers) });
  assert.equal(backends('/v1/x'), 'infra-backend-v1');
  assert.equal(backends('/', { version: 'two' }), 'infra-backend-v2');
  assert.equal(backends('/'), 'infra-backend-v1,infra-backend-v3');
  assert.equal(call('/').route?.name, `${INFRA}.mesh-split.2`);
  const status = statusOf(result, 'HTTPRoute', INFRA, 'mesh-split') as RouteStatus;
  assert.deepEqual(status.parents[0]?.parentRef, { group: '', kind: 'Service', name: 'infra-backend-v3', port: 8080 });
  assert.equal(status.parents[0]?.controllerName, 'istio.io/gateway-controller');
  assert.ok(status.parents[0]?.conditions.every((c) => c.status === 'True' && c.observedGeneration === 4));
  // Calls to other services are not touched.
  const other = explain(proxy.resources, {
    direction: 'outbound',
    host: `infra-backend-v1.${INFRA}.svc.cluster.local`,
    destinationIp: '10.96.1.1',
    port: 8080,
    protocol: 'http/1.1',
    tls: false,
    method: 'GET',
    path: '/v1/x',
    headers: {},
  });
  assert.equal(outcome({ explanation: other }), 'infra-backend-v1');
});

test('GAMMA: a parent Service that does not exist is NoMatchingParent and routes nothing', () => {
  const result = compileConformance(`---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: lost, namespace: ${INFRA}}
spec:
  parentRefs: [{group: "", kind: Service, name: nope}]
  rules: [{backendRefs: [{name: infra-backend-v1, port: 8080}]}]
`);
  assert.equal(routeCondition(result, 'HTTPRoute', INFRA, 'lost', 'Accepted'), 'Accepted=False (NoMatchingParent)');
  assert.ok(!result.inputs.virtualServices.length);
});

const httpsGateway = (certificateRef: string) => `---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: secure, namespace: ${INFRA}, generation: 2}
spec:
  gatewayClassName: istio
  listeners:
  - name: https
    port: 443
    protocol: HTTPS
    hostname: secure.example.com
    tls: {certificateRefs: [${certificateRef}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: secure, namespace: ${INFRA}}
spec:
  parentRefs: [{name: secure}]
  rules: [{backendRefs: [{name: infra-backend-v1, port: 8080}]}]
${gatewayPod('secure', INFRA, 12, [443])}`;

test('HTTPS listener: certificateRefs become istiod SDS names (kubernetes-gateway://<ns>/<name>), served over TLS by SNI', () => {
  const result = compileConformance(httpsGateway('{name: tls-validity-checks-certificate}'));
  const proxy = served(result, gatewayNode('secure', INFRA, 12));
  const e = explain(proxy.resources, {
    direction: 'outbound',
    host: 'secure.example.com',
    port: 443,
    protocol: 'h2',
    tls: true,
    sni: 'secure.example.com',
    method: 'GET',
    path: '/',
    headers: {},
  });
  assert.equal(outcome({ explanation: e }), 'infra-backend-v1');
  const listener = JSON.stringify(proxy.resources.listeners.get('0.0.0.0_443'));
  assert.ok(listener.includes(`kubernetes-gateway://${INFRA}/tls-validity-checks-certificate`), listener.slice(0, 400));
});

test('GatewaySecretMissingReferenceGrant / GatewaySecretReferenceGrantSpecific: a Secret in another namespace needs a grant', () => {
  const ref = `{name: certificate, namespace: ${WEB}}`;
  const without = compileConformance(httpsGateway(ref));
  const gw = statusOf(without, 'Gateway', INFRA, 'secure') as GatewayStatus;
  const resolved = gw.listeners[0]?.conditions.find((c) => c.type === 'ResolvedRefs');
  assert.deepEqual([resolved?.status, resolved?.reason], ['False', 'RefNotPermitted']);
  assert.equal(gw.listeners[0]?.conditions.find((c) => c.type === 'Programmed')?.status, 'False');
  assert.equal(gw.conditions.find((c) => c.type === 'Accepted')?.reason, 'ListenersNotValid');
  assert.equal(gw.conditions[0]?.observedGeneration, 2);

  const granted = compileConformance(
    httpsGateway(ref),
    `---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: secret, namespace: ${WEB}}
spec:
  from: [{group: gateway.networking.k8s.io, kind: Gateway, namespace: ${INFRA}}]
  to: [{group: "", kind: Secret, name: certificate}]
`,
  );
  const ok = statusOf(granted, 'Gateway', INFRA, 'secure') as GatewayStatus;
  assert.ok(
    ok.listeners[0]?.conditions.every((c) => (c.type === 'Conflicted' ? c.status === 'False' : c.status === 'True')),
  );
  const listener = JSON.stringify(
    served(granted, gatewayNode('secure', INFRA, 12)).resources.listeners.get('0.0.0.0_443'),
  );
  assert.ok(listener.includes(`kubernetes-gateway://${WEB}/certificate`));
});

test('GatewayInvalidRouteKind and unsupported protocols: listener conditions', () => {
  const result = compileConformance(`---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: odd, namespace: ${INFRA}}
spec:
  gatewayClassName: istio
  listeners:
  - {name: kinds, port: 80, protocol: HTTP, allowedRoutes: {kinds: [{kind: FooRoute}]}}
  - {name: udp, port: 53, protocol: UDP}
${gatewayPod('odd', INFRA, 13)}`);
  const gw = statusOf(result, 'Gateway', INFRA, 'odd') as GatewayStatus;
  const cond = (i: number, type: string) => {
    const c = gw.listeners[i]?.conditions.find((x) => x.type === type);
    return `${c?.status} ${c?.reason}`;
  };
  assert.equal(cond(0, 'ResolvedRefs'), 'False InvalidRouteKinds');
  assert.deepEqual(gw.listeners[0]?.supportedKinds, []);
  assert.equal(cond(1, 'Accepted'), 'False UnsupportedProtocol');
  assert.equal(gw.conditions.find((c) => c.type === 'Accepted')?.status, 'False');
});

test('a Gateway of a class meshsnap does not own gets no status and no config', () => {
  const result = compileConformance(`---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: other}
spec: {controllerName: example.com/other}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: foreign, namespace: ${INFRA}}
spec:
  gatewayClassName: other
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: on-foreign, namespace: ${INFRA}}
spec:
  parentRefs: [{name: foreign}]
  rules: [{backendRefs: [{name: infra-backend-v1, port: 8080}]}]
`);
  assert.equal(statusOf(result, 'Gateway', INFRA, 'foreign'), undefined);
  assert.equal(statusOf(result, 'GatewayClass', '', 'other'), undefined);
  assert.equal(statusOf(result, 'HTTPRoute', INFRA, 'on-foreign'), undefined);
  assert.ok(!result.inputs.gateways.some((g) => g.meta.name.startsWith('foreign~')));
});

test("meshsnap's own controller name is an alias of Istio's", () => {
  const result = compileConformance(`---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: meshsnap}
spec: {controllerName: meshsnap.dev/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: mine, namespace: ${INFRA}}
spec:
  gatewayClassName: meshsnap
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: on-mine, namespace: ${INFRA}}
spec:
  parentRefs: [{name: mine}]
  rules: [{backendRefs: [{name: infra-backend-v2, port: 8080}]}]
${gatewayPod('mine', INFRA, 14)}`);
  assert.equal(outcome(send(result, 'mine', { host: 'x.example', path: '/' })), 'infra-backend-v2');
  const status = statusOf(result, 'HTTPRoute', INFRA, 'on-mine') as RouteStatus;
  assert.equal(status.parents[0]?.controllerName, 'meshsnap.dev/gateway-controller');
});

test('TCPRouteWeightedRouting: a TCP listener forwards by weight; a weight 0 backend gets nothing', () => {
  const result = compileConformance(`---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: tcp-weighted-gateway, namespace: ${INFRA}}
spec:
  gatewayClassName: istio
  listeners: [{name: tcp, port: 9000, protocol: TCP, allowedRoutes: {kinds: [{kind: TCPRoute}]}}]
---
apiVersion: gateway.networking.k8s.io/v1alpha2
kind: TCPRoute
metadata: {name: tcp-weighted-route, namespace: ${INFRA}}
spec:
  parentRefs: [{name: tcp-weighted-gateway, sectionName: tcp}]
  rules:
  - backendRefs:
    - {name: infra-backend-v1, port: 8080, weight: 70}
    - {name: infra-backend-v2, port: 8080, weight: 30}
    - {name: infra-backend-v3, port: 8080, weight: 0}
${gatewayPod('tcp-weighted-gateway', INFRA, 15, [9000])}`);
  const proxy = served(result, gatewayNode('tcp-weighted-gateway', INFRA, 15));
  const e = explain(proxy.resources, {
    direction: 'outbound',
    host: '10.96.9.15',
    port: 9000,
    protocol: 'tcp',
    tls: false,
    method: 'GET',
    path: '/',
    headers: {},
  });
  assert.equal(e.outcome, 'tcp_proxy', e.summary);
  assert.deepEqual(
    e.clusters.map((c) => [c.name.split('|')[3]?.split('.')[0], c.weight]),
    [
      ['infra-backend-v1', 70],
      ['infra-backend-v2', 30],
    ],
  );
  assert.equal(routeCondition(result, 'TCPRoute', INFRA, 'tcp-weighted-route', 'Accepted'), 'Accepted=True (Accepted)');
  const gw = statusOf(result, 'Gateway', INFRA, 'tcp-weighted-gateway') as GatewayStatus;
  assert.deepEqual(gw.listeners[0]?.supportedKinds, [{ group: 'gateway.networking.k8s.io', kind: 'TCPRoute' }]);
  assert.equal(gw.listeners[0]?.attachedRoutes, 1);
});

test('TCPRouteInvalidNonTCPListener: an HTTPRoute on a TCP listener is not allowed (NotAllowedByListeners)', () => {
  const result = compileConformance(`---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: tcp-only, namespace: ${INFRA}}
spec:
  gatewayClassName: istio
  listeners: [{name: tcp, port: 9000, protocol: TCP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: http-on-tcp, namespace: ${INFRA}}
spec:
  parentRefs: [{name: tcp-only}]
  rules: [{backendRefs: [{name: infra-backend-v1, port: 8080}]}]
`);
  assert.equal(
    routeCondition(result, 'HTTPRoute', INFRA, 'http-on-tcp', 'Accepted'),
    'Accepted=False (NotAllowedByListeners)',
  );
});

test('GAMMA GRPCRoute for proxyless gRPC clients: method matches and weights in the <fqdn>:<port> route config, plain prefixes only', () => {
  const result = compileConformance(`---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: grpc-mesh, namespace: ${INFRA}}
spec:
  parentRefs: [{group: "", kind: Service, name: grpc-infra-backend-v1, port: 9000}]
  rules:
  - matches: [{method: {service: ${SERVICE}, method: EchoTwo}}]
    backendRefs: [{name: grpc-infra-backend-v2, port: 9000}]
  - matches: [{method: {service: ${SERVICE}}}]
    backendRefs:
    - {name: grpc-infra-backend-v1, port: 9000, weight: 80}
    - {name: grpc-infra-backend-v3, port: 9000, weight: 20}
`);
  const proxy = served(result, {
    id: `sidecar~10.244.1.2~client-0.${INFRA}~${INFRA}.svc.cluster.local`,
    metadata: { NAMESPACE: INFRA, GENERATOR: 'grpc' },
  });
  const name = `grpc-infra-backend-v1.${INFRA}.svc.cluster.local:9000`;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- config_dump JSON
  const rc = proxy.resources.routes.get(name) as any;
  assert.ok(rc, `route config ${name}`);
  const routes = rc.virtual_hosts[0].routes;
  assert.deepEqual(routes[0].match, { path: `/${SERVICE}/EchoTwo`, case_sensitive: true });
  assert.match(routes[0].route.cluster, /grpc-infra-backend-v2/);
  assert.deepEqual(routes[1].match, { prefix: `/${SERVICE}/`, case_sensitive: true });
  assert.deepEqual(
    routes[1].route.weighted_clusters.clusters.map((c: { weight: number }) => c.weight),
    [80, 20],
  );
});

test('TLSRoute on a Passthrough listener: SNI names the route hostnames meet the listener hostname with (TLSRouteHostnameIntersection)', () => {
  const result = compileConformance(`---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: tls-passthrough, namespace: ${INFRA}}
spec:
  gatewayClassName: istio
  listeners:
  - {name: tls, port: 443, protocol: TLS, hostname: "*.example.com", tls: {mode: Passthrough}}
---
apiVersion: gateway.networking.k8s.io/v1alpha2
kind: TLSRoute
metadata: {name: tls-route, namespace: ${INFRA}}
spec:
  parentRefs: [{name: tls-passthrough}]
  hostnames: [abc.example.com]
  rules: [{backendRefs: [{name: infra-backend-v1, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1alpha2
kind: TLSRoute
metadata: {name: tls-elsewhere, namespace: ${INFRA}}
spec:
  parentRefs: [{name: tls-passthrough}]
  hostnames: [abc.example.org]
  rules: [{backendRefs: [{name: infra-backend-v2, port: 8080}]}]
${gatewayPod('tls-passthrough', INFRA, 16, [443])}`);
  const proxy = served(result, gatewayNode('tls-passthrough', INFRA, 16));
  const connect = (sni: string) =>
    explain(proxy.resources, {
      direction: 'outbound',
      host: sni,
      port: 443,
      protocol: 'tcp',
      tls: true,
      sni,
      method: 'GET',
      path: '/',
      headers: {},
    });
  const e = connect('abc.example.com');
  assert.equal(e.outcome, 'tcp_proxy', e.summary);
  assert.match(e.clusters[0]?.name ?? '', /infra-backend-v1/);
  assert.notEqual(connect('abc.example.org').outcome, 'tcp_proxy');
  assert.equal(routeCondition(result, 'TLSRoute', INFRA, 'tls-route', 'Accepted'), 'Accepted=True (Accepted)');
  assert.equal(
    routeCondition(result, 'TLSRoute', INFRA, 'tls-elsewhere', 'Accepted'),
    'Accepted=False (NoMatchingListenerHostname)',
  );
});

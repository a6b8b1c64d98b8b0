/**
 * Security policies on gateway (router) proxies. Facts ported from istiod's gateway listener tests
 * (pilot/pkg/networking/core/gateway_test.go, "TCP RBAC and Stats", "mTLS, RBAC, …", "HTTP RBAC, …":
 * meshsnap builds neither metadata exchange nor stats filters, so those are left out) and from
 * its selection (pilot/pkg/model/policyattachment.go): an Istio Gateway's pod takes policies by
 * label as a sidecar does, never by targetRef; PeerAuthentication does not touch its listeners.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chainFilters, compileGateway, gatewayYaml, INGRESS_NODE } from '../../helpers/gateway-sim.js';
import { served } from '../../helpers/mesh.js';

const RBAC = 'envoy.filters.network.rbac';
const TCP_PROXY = 'envoy.filters.network.tcp_proxy';
const EXT_AUTHZ = 'envoy.filters.network.ext_authz';
const HTTP_RBAC = 'envoy.filters.http.rbac';
const HTTP_EXT_AUTHZ = 'envoy.filters.http.ext_authz';
const JWT = 'envoy.filters.http.jwt_authn';
const HCM_TAIL = ['envoy.filters.http.fault', 'envoy.filters.http.cors', 'envoy.filters.http.router'];

const policy = (name: string, namespace: string, spec: string): string => `---
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: ${name}, namespace: ${namespace}}
spec: ${spec}
`;

/** istiod's test mesh config: a gRPC ext_authz provider named extauthz. */
const EXTAUTHZ_MESH = `---
apiVersion: v1
kind: ConfigMap
metadata: {name: istio, namespace: istio-system}
data:
  mesh: |-
    extensionProviders:
    - name: extauthz
      envoyExtAuthzGrpc: {service: a.default.svc.cluster.local, port: 80}
`;

const tcpVs = (gateway: string, host = 'www.example.com'): string => `---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: tcp, namespace: default}
spec:
  hosts: ["${host}"]
  gateways: ["${gateway}"]
  tcp:
  - route: [{destination: {host: a.default.svc.cluster.local, port: {number: 80}}}]
`;

const httpVs = (gateway: string): string => `---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: web, namespace: default}
spec:
  hosts: ["*"]
  gateways: ["${gateway}"]
  http:
  - route: [{destination: {host: a.default.svc.cluster.local, port: {number: 80}}}]
`;

const TCP_GATEWAY = gatewayYaml(
  'gateway',
  'default',
  'port: {name: tcp, number: 100, protocol: TCP}\nhosts: ["www.example.com"]',
);
const HTTP_GATEWAY = gatewayYaml('gateway', 'default', 'port: {name: http, number: 200, protocol: HTTP}\nhosts: ["*"]');
const ALLOW_NOTHING = policy('allow-nothing', 'istio-system', '{}');
const CUSTOM = policy(
  'custom',
  'istio-system',
  '{action: CUSTOM, provider: {name: extauthz}, rules: [{to: [{operation: {paths: ["/admin"]}}]}]}',
);

test('istiod "TCP RBAC": a mesh-wide policy puts network RBAC before tcp_proxy on a TCP server', () => {
  const r = compileGateway(TCP_GATEWAY + tcpVs('default/gateway') + ALLOW_NOTHING);
  assert.deepEqual(chainFilters(r, { port: 100 }).network, [RBAC, TCP_PROXY]);
});

// istiod's test has an ISTIO_MUTUAL server on a TCP port, which Istio's validation refuses; TLS is the valid form.
test('istiod "mTLS, RBAC": on an ISTIO_MUTUAL TLS server, CUSTOM (shadow RBAC, ext_authz) then the ALLOW RBAC', () => {
  const gw = gatewayYaml(
    'gateway',
    'default',
    'port: {name: tls, number: 100, protocol: TLS}\nhosts: ["www.example.com"]\ntls: {mode: ISTIO_MUTUAL}',
  );
  const r = compileGateway(EXTAUTHZ_MESH + gw + tcpVs('default/gateway') + ALLOW_NOTHING + CUSTOM);
  assert.deepEqual(chainFilters(r, { port: 100, sni: 'www.example.com' }).network, [RBAC, EXT_AUTHZ, RBAC, TCP_PROXY]);
});

test('istiod "HTTP RBAC": CUSTOM (shadow RBAC, ext_authz) then the ALLOW RBAC, before fault, cors and the router', () => {
  const r = compileGateway(EXTAUTHZ_MESH + HTTP_GATEWAY + httpVs('default/gateway') + ALLOW_NOTHING + CUSTOM);
  const f = chainFilters(r, { port: 200, host: 'x', path: '/' });
  assert.deepEqual(f.network, ['envoy.filters.network.http_connection_manager']);
  assert.deepEqual(f.http, [HTTP_RBAC, HTTP_EXT_AUTHZ, HTTP_RBAC, ...HCM_TAIL]);
});

test('a RequestAuthentication on the gateway: jwt_authn between CUSTOM and RBAC, clearing the route cache (istiod: every proxy but sidecars)', () => {
  const jwt = `---
apiVersion: security.istio.io/v1
kind: RequestAuthentication
metadata: {name: jwt, namespace: istio-system}
spec:
  selector: {matchLabels: {istio: ingressgateway}}
  jwtRules: [{issuer: "testing@secure.istio.io", jwks: '{"keys":[]}'}]
`;
  const deny = policy(
    'need-token',
    'istio-system',
    '{selector: {matchLabels: {istio: ingressgateway}}, action: DENY, rules: [{from: [{source: {notRequestPrincipals: ["*"]}}]}]}',
  );
  const r = compileGateway(EXTAUTHZ_MESH + HTTP_GATEWAY + httpVs('default/gateway') + jwt + deny + CUSTOM);
  const f = chainFilters(r, { port: 200, host: 'x', path: '/' });
  assert.deepEqual(f.http, [HTTP_RBAC, HTTP_EXT_AUTHZ, JWT, HTTP_RBAC, ...HCM_TAIL]);
  const jwtConfig = f.configs.find((c) => c.name === JWT)?.config;
  assert.equal(jwtConfig.providers['origins-0'].clear_route_cache, true);
});

test('AUTO_PASSTHROUGH chains get no authorization filter (istiod builds them without authz); PASSTHROUGH chains do', () => {
  const gw = gatewayYaml(
    'gateway',
    'default',
    'port: {name: tls, number: 15443, protocol: TLS}\nhosts: ["*.local"]\ntls: {mode: AUTO_PASSTHROUGH}',
    'port: {name: tls-pass, number: 443, protocol: TLS}\nhosts: ["mysite.example.com"]\ntls: {mode: PASSTHROUGH}',
  );
  const tlsVs = `---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: pass, namespace: default}
spec:
  hosts: ["mysite.example.com"]
  gateways: ["default/gateway"]
  tls:
  - match: [{port: 443, sniHosts: ["mysite.example.com"]}]
    route: [{destination: {host: mysite.default.svc.cluster.local, port: {number: 443}}}]
`;
  const r = compileGateway(gw + tlsVs + ALLOW_NOTHING);
  const sni = 'outbound_.80_._.a.default.svc.cluster.local';
  assert.deepEqual(chainFilters(r, { port: 15443, sni, alpn: ['istio'] }).network, [TCP_PROXY]);
  assert.deepEqual(chainFilters(r, { port: 443, sni: 'mysite.example.com' }).network, [RBAC, TCP_PROXY]);
});

test('selection as for a sidecar: root and own-namespace policies apply, by selector; other namespaces and targetRefs do not', () => {
  const base = HTTP_GATEWAY + httpVs('default/gateway');
  const httpOf = (yaml: string) => chainFilters(compileGateway(base + yaml), { port: 200, host: 'x', path: '/' }).http;
  const deny = 'action: DENY, rules: [{to: [{operation: {paths: ["/admin"]}}]}]';
  // The pod is in istio-system (the root namespace).
  assert.deepEqual(httpOf(policy('p', 'istio-system', `{${deny}}`)), [HTTP_RBAC, ...HCM_TAIL]);
  assert.deepEqual(httpOf(policy('p', 'istio-system', `{selector: {matchLabels: {istio: ingressgateway}}, ${deny}}`)), [
    HTTP_RBAC,
    ...HCM_TAIL,
  ]);
  assert.deepEqual(httpOf(policy('p', 'istio-system', `{selector: {matchLabels: {app: other}}, ${deny}}`)), HCM_TAIL);
  // The Gateway object's namespace (default) is not the pod's: its policies do not apply.
  assert.deepEqual(httpOf(policy('p', 'default', `{${deny}}`)), HCM_TAIL);
  const targeted = compileGateway(
    base +
      policy('p', 'default', `{targetRefs: [{group: networking.istio.io, kind: Gateway, name: gateway}], ${deny}}`),
  );
  assert.deepEqual(chainFilters(targeted, { port: 200, host: 'x', path: '/' }).http, HCM_TAIL);
  assert.ok(targeted.diagnostics.some((d) => d.code === 'policy-not-applied' && d.name === 'p'));
});

test('the router class is keyed on the label-selected policies, and every replica is placed in it', () => {
  const selected = policy(
    'gw-deny',
    'istio-system',
    '{selector: {matchLabels: {istio: ingressgateway}}, action: DENY, rules: [{to: [{operation: {paths: ["/admin"]}}]}]}',
  );
  const r = compileGateway(HTTP_GATEWAY + httpVs('default/gateway') + selected);
  const router = r.snapshot.content.classes.filter((c) => c.generator === 'router');
  assert.deepEqual(
    router.map((c) => c.id),
    ['router/istio-system/_/default/gateway/authz:istio-system/gw-deny'],
  );
  const replica = { ...INGRESS_NODE, id: INGRESS_NODE.id.replace('istio-ingressgateway-0', 'istio-ingressgateway-1') };
  assert.equal(served(r, replica).classId, router[0]?.id);
});

test('PeerAuthentication does not apply to gateway listeners: STRICT mesh-wide and workload-selected leave them unchanged', () => {
  const base = compileGateway(
    HTTP_GATEWAY +
      TCP_GATEWAY.replace('name: gateway', 'name: tcp-gw') +
      tcpVs('default/tcp-gw') +
      httpVs('default/gateway'),
  );
  const strict = compileGateway(
    HTTP_GATEWAY +
      TCP_GATEWAY.replace('name: gateway', 'name: tcp-gw') +
      tcpVs('default/tcp-gw') +
      httpVs('default/gateway') +
      `---
apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: {name: default, namespace: istio-system}
spec: {mtls: {mode: STRICT}}
---
apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: {name: gw, namespace: istio-system}
spec: {selector: {matchLabels: {istio: ingressgateway}}, mtls: {mode: DISABLE}}
`,
  );
  const a = served(base, INGRESS_NODE);
  const b = served(strict, INGRESS_NODE);
  assert.equal(b.classId, a.classId);
  assert.deepEqual([...b.resources.listeners], [...a.resources.listeners]);
});

test('a policy on peer identity warns on a gateway whose servers ask no client certificate, not on an ISTIO_MUTUAL one', () => {
  const byPrincipal = policy(
    'from-mesh',
    'istio-system',
    '{selector: {matchLabels: {istio: ingressgateway}}, rules: [{from: [{source: {principals: ["cluster.local/ns/default/sa/client"]}}]}]}',
  );
  const warned = (gateway: string) =>
    compileGateway(gateway + httpVs('default/gateway') + byPrincipal).diagnostics.some(
      (d) => d.code === 'principals-without-mtls' && d.name === 'from-mesh',
    );
  assert.equal(warned(HTTP_GATEWAY), true);
  const mutual = gatewayYaml(
    'gateway',
    'default',
    'port: {name: https, number: 443, protocol: HTTPS}\nhosts: ["*"]\ntls: {mode: ISTIO_MUTUAL}',
  );
  assert.equal(warned(mutual), false);
});

test('a router a policy selects is refused, not served the class without it, when no compiled pod has its labels', () => {
  const canary = policy(
    'canary-deny',
    'istio-system',
    '{selector: {matchLabels: {version: canary}}, action: DENY, rules: [{to: [{operation: {paths: ["/admin"]}}]}]}',
  );
  const r = compileGateway(HTTP_GATEWAY + httpVs('default/gateway') + canary);
  const labels = INGRESS_NODE.metadata?.LABELS as Record<string, string>;
  const node = { ...INGRESS_NODE, metadata: { ...INGRESS_NODE.metadata, LABELS: { ...labels, version: 'canary' } } };
  assert.throws(() => served(r, node), /router class .*authz:istio-system\/canary-deny is not in the mesh snapshot/);
  assert.equal(served(r, INGRESS_NODE).classId, 'router/istio-system/_/default/gateway');
});

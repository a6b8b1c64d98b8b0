/**
 * Inbound listeners of proxyless gRPC servers (istiod's grpcgen buildInboundListeners): names and
 * addresses, mTLS per PeerAuthentication (PERMISSIVE becomes STRICT on pods labelled for Istio mTLS,
 * plaintext otherwise), RBAC DENY/ALLOW filters, and where meshsnap stays closed where grpcgen
 * would open (ALLOW without translatable rules, CUSTOM).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { served } from '../../helpers/mesh.js';
import { compileYaml } from './mesh.js';

type Json = Record<string, unknown>;

const GRPC_NODE = {
  id: 'sidecar~10.244.0.60~client.default~default.svc.cluster.local',
  metadata: { GENERATOR: 'grpc', NAMESPACE: 'default' },
};

function grpcPod(name: string, ip: string, labels: Record<string, string>): string {
  return `apiVersion: v1
kind: Pod
metadata: { name: ${name}, namespace: default, labels: ${JSON.stringify(labels)} }
spec:
  serviceAccountName: ${name}
  containers: [{ name: app, ports: [{ containerPort: 50051 }] }]
status: { phase: Running, podIP: ${ip}, podIPs: [{ ip: ${ip} }], conditions: [{ type: Ready, status: 'True' }] }`;
}

const SVC = `apiVersion: v1
kind: Service
metadata: { name: greeter, namespace: default }
spec:
  clusterIP: 10.96.0.90
  selector: { app: greeter }
  ports: [{ name: grpc, port: 7070, targetPort: 50051, protocol: TCP }]`;

const policy = (kind: string, name: string, spec: string) => `apiVersion: security.istio.io/v1
kind: ${kind}
metadata: { name: ${name}, namespace: default }
spec: ${spec}`;

function listeners(...docs: string[]): { all: Map<string, Json>; diagnostics: string[] } {
  const result = compileYaml(...docs);
  return {
    all: served(result, GRPC_NODE).resources.listeners,
    diagnostics: result.diagnostics.map((d) => d.code),
  };
}

const A36 = (address: string) => `grpc/server?xds.resource.listening_address=${address}`;
const ISTIO = (address: string) => `xds.istio.io/grpc/lds/inbound/${address}`;

function chainOf(l: Json | undefined): { name: string; mtls: boolean; filters: string[]; hcm: Json } {
  assert.ok(l, 'listener served');
  const chains = l.filter_chains as Json[];
  assert.equal(chains.length, 1);
  const chain = chains[0] as Json;
  const hcm = ((chain.filters as Json[])[0] as Json).typed_config as Json;
  return {
    name: String(chain.name),
    mtls: chain.transport_socket !== undefined,
    filters: (hcm.http_filters as Json[]).map((f) => String(f.name)),
    hcm,
  };
}

test('names, addresses and the non-forwarding route, under both name templates', () => {
  const { all } = listeners(SVC, grpcPod('greeter-0', '10.244.0.70', { app: 'greeter' }));
  const names = [...all.keys()].filter((n) => n.includes('listening_address') || n.includes('inbound/'));
  assert.deepEqual(names.sort(), [
    A36('0.0.0.0:50051'),
    A36('10.244.0.70:50051'),
    A36('[::]:50051'),
    ISTIO('0.0.0.0:50051'),
    ISTIO('10.244.0.70:50051'),
    ISTIO('[::]:50051'),
  ]);
  const l = all.get(A36('10.244.0.70:50051')) as Json;
  assert.deepEqual(l.address, { socket_address: { address: '10.244.0.70', port_value: 50051 } });
  assert.deepEqual((all.get(A36('[::]:50051')) as Json).address, {
    socket_address: { address: '::', port_value: 50051 },
  });
  const c = chainOf(l);
  assert.equal(c.name, 'inbound-plaintext');
  assert.deepEqual(c.filters, ['envoy.filters.http.router']);
  assert.deepEqual(c.hcm.route_config, {
    name: 'inbound',
    virtual_hosts: [{ domains: ['*'], routes: [{ match: { prefix: '/' }, non_forwarding_action: {} }] }],
  });
  assert.equal(l.listener_filters, undefined, 'gRPC NACKs listener filters');
});

test('mTLS: STRICT requires a client certificate; PERMISSIVE is STRICT on Istio-mTLS pods, else plaintext; DISABLE plaintext', () => {
  const istioPod = grpcPod('greeter-0', '10.244.0.70', { app: 'greeter', 'security.istio.io/tlsMode': 'istio' });
  const plainPod = grpcPod('greeter-0', '10.244.0.70', { app: 'greeter' });
  const at = (docs: string[]) => chainOf(listeners(SVC, ...docs).all.get(A36('10.244.0.70:50051')));
  assert.equal(at([plainPod]).mtls, false);
  assert.equal(at([istioPod]).mtls, true);
  assert.equal(at([istioPod]).name, 'inbound-mtls');
  assert.equal(at([plainPod, policy('PeerAuthentication', 'default', '{ mtls: { mode: STRICT } }')]).mtls, true);
  assert.equal(at([istioPod, policy('PeerAuthentication', 'default', '{ mtls: { mode: DISABLE } }')]).mtls, false);
  // Port level, by target port.
  const portLevel = policy(
    'PeerAuthentication',
    'greeter',
    "{ selector: { matchLabels: { app: greeter } }, mtls: { mode: DISABLE }, portLevelMtls: { '50051': { mode: STRICT } } }",
  );
  assert.equal(at([plainPod, portLevel]).mtls, true);
  const socket = (listeners(SVC, istioPod).all.get(A36('10.244.0.70:50051')) as Json).filter_chains as Json[];
  const tls = ((socket[0] as Json).transport_socket as Json).typed_config as Json;
  assert.deepEqual(tls.require_client_certificate, true);
  assert.deepEqual((tls.common_tls_context as Json).tls_certificate_provider_instance, {
    instance_name: 'default',
    certificate_name: 'default',
  });
});

test('RBAC: DENY then ALLOW filters before the router; ALLOW without translatable rules denies; CUSTOM denies', () => {
  const pod = grpcPod('greeter-0', '10.244.0.70', { app: 'greeter' });
  const at = (...docs: string[]) => chainOf(listeners(SVC, pod, ...docs).all.get(A36('10.244.0.70:50051')));
  const both = at(
    policy(
      'AuthorizationPolicy',
      'no-bye',
      '{ action: DENY, rules: [{ to: [{ operation: { paths: [/echo.Echo/Bye] } }] }] }',
    ),
    policy('AuthorizationPolicy', 'ns-a', '{ rules: [{ from: [{ source: { namespaces: [a] } }] }] }'),
  );
  assert.deepEqual(both.filters, [
    'envoy.filters.http.rbac.DENY',
    'envoy.filters.http.rbac',
    'envoy.filters.http.router',
  ]);
  const deny = ((both.hcm.http_filters as Json[])[0] as Json).typed_config as Json;
  assert.deepEqual(Object.keys((deny.rules as Json).policies as Json), ['default-no-bye-0']);
  // istiod's grpcgen drops the ALLOW filter when it has no rules, allowing everything; here it denies everything.
  const nothing = at(policy('AuthorizationPolicy', 'allow-nothing', '{}'));
  assert.deepEqual(nothing.filters, ['envoy.filters.http.rbac', 'envoy.filters.http.router']);
  assert.deepEqual(((nothing.hcm.http_filters as Json[])[0] as Json).typed_config, {
    '@type': 'type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC',
    rules: {},
  });
  // CUSTOM cannot call an authorizer from gRPC: what it covers is denied.
  const custom = at(
    policy(
      'AuthorizationPolicy',
      'ext',
      '{ action: CUSTOM, provider: { name: nowhere }, rules: [{ to: [{ operation: { paths: [/admin] } }] }] }',
    ),
  );
  assert.deepEqual(custom.filters, ['envoy.filters.http.rbac.DENY', 'envoy.filters.http.router']);
});

test('a wildcard address is served only when every pod on the port gets the same listener', () => {
  const a = grpcPod('greeter-a', '10.244.0.70', { app: 'greeter', track: 'a' });
  const b = grpcPod('greeter-b', '10.244.0.71', { app: 'greeter', track: 'b' });
  const same = listeners(SVC, a, b);
  assert.ok(same.all.has(A36('0.0.0.0:50051')));
  const differ = listeners(
    SVC,
    a,
    b,
    policy('AuthorizationPolicy', 'only-a', '{ selector: { matchLabels: { track: a } }, action: DENY, rules: [{}] }'),
  );
  assert.equal(differ.all.has(A36('0.0.0.0:50051')), false);
  assert.equal(differ.all.has(A36('[::]:50051')), false);
  assert.ok(differ.all.has(A36('10.244.0.70:50051')));
  assert.ok(differ.diagnostics.includes('grpc-server-wildcard-ambiguous'));
  const own = chainOf(differ.all.get(A36('10.244.0.70:50051')));
  const other = chainOf(differ.all.get(A36('10.244.0.71:50051')));
  assert.deepEqual(own.filters, ['envoy.filters.http.rbac.DENY', 'envoy.filters.http.router']);
  assert.deepEqual(other.filters, ['envoy.filters.http.router']);
});

test('pods a ServiceEntry selects by workloadSelector serve its gRPC target ports too (istiod: their ServiceTargets)', () => {
  const entry = `apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: { name: greeter-entry, namespace: default }
spec:
  hosts: [greeter.example.internal]
  location: MESH_INTERNAL
  resolution: STATIC
  workloadSelector: { labels: { app: greeter-se } }
  ports: [{ number: 7070, name: grpc, protocol: GRPC, targetPort: 50051 }]`;
  const { all } = listeners(entry, grpcPod('greeter-se-0', '10.244.0.80', { app: 'greeter-se' }));
  const names = [...all.keys()].filter((n) => n.includes('inbound/'));
  assert.deepEqual(names.sort(), [ISTIO('0.0.0.0:50051'), ISTIO('10.244.0.80:50051'), ISTIO('[::]:50051')]);
  assert.equal(chainOf(all.get(ISTIO('10.244.0.80:50051'))).name, 'inbound-plaintext');
  // A workload no selector picks serves nothing.
  const none = listeners(entry, grpcPod('other-0', '10.244.0.81', { app: 'other' }));
  assert.deepEqual(
    [...none.all.keys()].filter((n) => n.includes('inbound/')),
    [],
  );
});

test("a named targetPort is each pod's own: pods whose containers number it differently each get their port", () => {
  const svc = SVC.replace('targetPort: 50051', 'targetPort: grpc-port');
  const slice = (name: string, ip: string, pod: string, port: number) => `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: ${name}, namespace: default, labels: { kubernetes.io/service-name: greeter } }
addressType: IPv4
ports: [{ name: grpc, port: ${port}, protocol: TCP }]
endpoints:
- addresses: [${ip}]
  conditions: { ready: true }
  targetRef: { kind: Pod, namespace: default, name: ${pod} }`;
  const { all, diagnostics } = listeners(
    svc,
    grpcPod('greeter-a', '10.244.0.70', { app: 'greeter', track: 'a' }),
    grpcPod('greeter-b', '10.244.0.71', { app: 'greeter', track: 'b' }),
    slice('greeter-a', '10.244.0.70', 'greeter-a', 50051),
    slice('greeter-b', '10.244.0.71', 'greeter-b', 50052),
  );
  const names = [...all.keys()].filter((n) => n.includes('inbound/'));
  assert.deepEqual(names.sort(), [
    ISTIO('0.0.0.0:50051'),
    ISTIO('0.0.0.0:50052'),
    ISTIO('10.244.0.70:50051'),
    ISTIO('10.244.0.71:50052'),
    ISTIO('[::]:50051'),
    ISTIO('[::]:50052'),
  ]);
  // Sidecar classes still resolve it once per service: the compile says so.
  assert.ok(diagnostics.includes('target-port-differs'));
});

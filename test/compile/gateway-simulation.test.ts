/**
 * Facts from Istio's gateway simulation tests (pilot/pkg/networking/core/gateway_simulation_test.go),
 * restated: a request to the ingress gateway reaches the listener, route config, virtual host and
 * cluster istiod's config sends it to, or stops where istiod's stops.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileGateway, gatewayYaml, INGRESS_NODE, simulate } from '../helpers/gateway-sim.js';
import { served, type TestNode } from '../helpers/mesh.js';

const httpServer = (host: string, port = 80, extra = ''): string =>
  `port: {number: ${port}, name: http, protocol: HTTP}\nhosts: ["${host}"]${extra}`;

const vs = (
  name: string,
  hosts: string[],
  gateways: string[],
  dest: string,
  port: number,
  ns = 'default',
): string => `---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: ${name}, namespace: ${ns}}
spec:
  hosts: ${JSON.stringify(hosts)}
  gateways: ${JSON.stringify(gateways)}
  http:
  - match: [{uri: {prefix: /}}]
    route: [{destination: {host: ${dest}, port: {number: ${port}}}}]
`;

test('a gateway without VirtualServices serves the blackhole virtual host: 404, and nothing on other ports', () => {
  const r = compileGateway(gatewayYaml('gw', 'default', httpServer('foo.bar')));
  assert.deepEqual(simulate(r, { port: 80, host: 'foo.bar' }), {
    listener: '0.0.0.0_80',
    routeConfig: 'http.80',
    virtualHost: 'blackhole:80',
    error: 'no-route',
  });
  assert.deepEqual(simulate(r, { port: 81, host: 'foo.bar' }), { error: 'no-listener' });
});

test('a VirtualService for "*" serves the server\'s host; another host or path gets no route', () => {
  const r = compileGateway(
    gatewayYaml('gateway', 'default', httpServer('foo.bar')) +
      `---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: bookinfo, namespace: default}
spec:
  hosts: ["*"]
  gateways: [gateway]
  http:
  - match: [{uri: {exact: /productpage}}]
    route: [{destination: {host: productpage, port: {number: 9080}}}]
`,
  );
  assert.deepEqual(simulate(r, { port: 80, host: 'foo.bar' }), {
    listener: '0.0.0.0_80',
    routeConfig: 'http.80',
    virtualHost: 'foo.bar:80',
    error: 'no-route',
  });
  assert.equal(simulate(r, { port: 80, host: 'bad.bar' }).error, 'no-virtual-host');
  assert.deepEqual(simulate(r, { port: 80, host: 'foo.bar', path: '/productpage' }), {
    listener: '0.0.0.0_80',
    routeConfig: 'http.80',
    virtualHost: 'foo.bar:80',
    cluster: 'outbound|9080||productpage.default.svc.cluster.local',
  });
});

test('two VirtualServices under one wildcard server host get a virtual host each', () => {
  const r = compileGateway(
    gatewayYaml('gateway', 'default', httpServer('*.example.com')) +
      vs('a', ['a.example.com'], ['gateway'], 'a', 80) +
      vs('b', ['b.example.com'], ['gateway'], 'b', 80),
  );
  assert.equal(simulate(r, { port: 80, host: 'a.example.com' }).cluster, 'outbound|80||a.default.svc.cluster.local');
  assert.equal(simulate(r, { port: 80, host: 'b.example.com' }).cluster, 'outbound|80||b.default.svc.cluster.local');
  assert.equal(simulate(r, { port: 80, host: 'c.example.com' }).error, 'no-virtual-host');
});

test('httpsRedirect: plain HTTP to the host is redirected, with or without routes, even if another Gateway serves it plainly', () => {
  const redirect = httpServer('example.com', 80, '\ntls: {httpsRedirect: true}');
  const expected = {
    listener: '0.0.0.0_80',
    routeConfig: 'http.80',
    virtualHost: 'example.com:80',
    error: 'tls-redirect',
  };
  const route = vs('b', ['example.com'], ['gateway', 'gateway2'], 'b', 80);
  assert.deepEqual(
    simulate(compileGateway(gatewayYaml('gateway', 'default', redirect)), { port: 80, host: 'example.com' }),
    expected,
  );
  assert.deepEqual(
    simulate(compileGateway(gatewayYaml('gateway', 'default', redirect) + route), { port: 80, host: 'example.com' }),
    expected,
  );
  const mixed =
    gatewayYaml('gateway', 'default', redirect) + gatewayYaml('gateway2', 'default', httpServer('example.com')) + route;
  assert.deepEqual(simulate(compileGateway(mixed), { port: 80, host: 'example.com' }), expected);
});

test('httpsRedirect on an HTTPS server: TLS requests are routed on https.<port>.<portName>.<gateway>.<ns>', () => {
  const r = compileGateway(
    gatewayYaml(
      'gateway',
      'default',
      `port: {number: 443, name: https, protocol: HTTPS}\nhosts: [example.com]\ntls: {httpsRedirect: true, mode: SIMPLE, credentialName: test}`,
    ) + vs('b', ['example.com'], ['gateway'], 'b', 80),
  );
  const res = simulate(r, { port: 443, sni: 'example.com', host: 'example.com' });
  assert.equal(res.listener, '0.0.0.0_443');
  assert.equal(res.routeConfig, 'https.443.https.gateway.default');
  assert.equal(res.virtualHost, 'example.com:443');
  assert.equal(res.cluster, 'outbound|80||b.default.svc.cluster.local');
  assert.equal(res.tls.common_tls_context.tls_certificate_sds_secret_configs[0].name, 'kubernetes://test');
});

test('two TCP Gateways with one name in two namespaces: the VirtualService binds to the one it names', () => {
  const tcp = `port: {number: 80, name: tcp, protocol: TCP}\nhosts: [foo.bar]`;
  const route = `---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: bookinfo, namespace: default}
spec:
  hosts: ["*"]
  gateways: [istio-system/gateway]
  tcp:
  - route: [{destination: {host: productpage, port: {number: 9080}}}]
`;
  // istiod takes Gateways in creation (then namespace) order: "zeta" comes after istio-system and is dropped.
  const r = compileGateway(gatewayYaml('gateway', 'istio-system', tcp) + gatewayYaml('gateway', 'zeta', tcp) + route);
  assert.deepEqual(simulate(r, { port: 80 }), {
    listener: '0.0.0.0_80',
    cluster: 'outbound|9080||productpage.default.svc.cluster.local',
  });
  // "alpha" comes first and has no TCP route: istiod builds no listener (its issue 21394).
  const first = compileGateway(
    gatewayYaml('gateway', 'alpha', tcp) + gatewayYaml('gateway', 'istio-system', tcp) + route,
  );
  assert.equal(simulate(first, { port: 80 }).error, 'no-listener');
  assert.ok(first.diagnostics.some((d) => d.code === 'gateway-conflict' && d.namespace === 'istio-system'));
});

test('two passthrough VirtualServices for one SNI host: the first wins, the second is reported', () => {
  const r = compileGateway(
    gatewayYaml(
      'ingressgateway',
      'istio-system',
      `port: {number: 443, name: https, protocol: HTTPS}\nhosts: ['*.example.com']\ntls: {mode: PASSTHROUGH}`,
    ) +
      ['vs1', 'vs2']
        .map(
          (name) => `---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: ${name}, namespace: default}
spec:
  gateways: [istio-system/ingressgateway]
  hosts: [mysite.example.com]
  tls:
  - match: [{port: 443, sniHosts: [mysite.example.com]}]
    route: [{destination: {host: mysite.default.svc.cluster.local, port: {number: 443}}}]
`,
        )
        .join(''),
  );
  assert.deepEqual(simulate(r, { port: 443, sni: 'mysite.example.com' }), {
    listener: '0.0.0.0_443',
    cluster: 'outbound|443||mysite.default.svc.cluster.local',
  });
  assert.ok(r.diagnostics.some((d) => d.code === 'gateway-conflict' && d.name === 'vs2'));
});

test('multiple protocols on a port: whichever server comes first decides, the other is dropped', () => {
  const tcp = `port: {number: 80, name: tcp, protocol: TCP}\nhosts: [foo.bar]`;
  // TCP first (gateway "alpha"), no TCP route: no listener at all.
  const tcpFirst = compileGateway(
    gatewayYaml('alpha', 'default', tcp) + gatewayYaml('beta', 'default', httpServer('foo.bar')),
  );
  assert.equal(simulate(tcpFirst, { port: 80 }).error, 'no-listener');
  // HTTP first: the HTTP listener, with the blackhole virtual host (no VirtualService).
  const httpFirst = compileGateway(
    gatewayYaml('alpha', 'default', httpServer('foo.bar')) + gatewayYaml('beta', 'default', tcp),
  );
  assert.deepEqual(simulate(httpFirst, { port: 80, host: 'foo.bar' }), {
    listener: '0.0.0.0_80',
    routeConfig: 'http.80',
    virtualHost: 'blackhole:80',
    error: 'no-route',
  });
  const conflict = httpFirst.diagnostics.find((d) => d.code === 'gateway-conflict');
  assert.equal(conflict?.name, 'beta');
  assert.equal(conflict?.field, 'spec.servers[0]');
});

test('server hosts scoped by namespace pick which VirtualServices they serve', () => {
  const r = compileGateway(
    gatewayYaml(
      'alpha',
      'default',
      `port: {number: 80, name: http, protocol: HTTP}\nhosts: [ns-1/*.example.com, ns-2/*.example.com]`,
    ) +
      vs('one', ['a.example.com'], ['default/alpha'], 'a.default.svc.cluster.local', 80, 'ns-1') +
      vs('two', ['b.example.com'], ['default/alpha'], 'b.default.svc.cluster.local', 80, 'ns-2') +
      vs('three', ['c.example.com'], ['default/alpha'], 'b.default.svc.cluster.local', 80, 'ns-3'),
  );
  assert.equal(simulate(r, { port: 80, host: 'a.example.com' }).cluster, 'outbound|80||a.default.svc.cluster.local');
  assert.equal(simulate(r, { port: 80, host: 'b.example.com' }).cluster, 'outbound|80||b.default.svc.cluster.local');
  assert.equal(simulate(r, { port: 80, host: 'c.example.com' }).error, 'no-virtual-host');
});

test('a Gateway port that is a port of the gateway Service binds to its targetPort, and merges with a server on that port', () => {
  const service = `---
apiVersion: v1
kind: Service
metadata: {name: istio-ingressgateway, namespace: istio-system}
spec: {clusterIP: 10.96.20.1, selector: {istio: ingressgateway}, ports: [{name: http, port: 80, targetPort: 8080}]}
`;
  const r = compileGateway(
    service +
      gatewayYaml('gateway80', 'istio-system', httpServer('example.com', 80)) +
      gatewayYaml('gateway81', 'istio-system', httpServer('example.com', 8080)) +
      vs('a', ['example.com'], ['istio-system/gateway80', 'istio-system/gateway81'], 'a', 80),
  );
  assert.deepEqual(simulate(r, { port: 8080, host: 'example.com' }), {
    listener: '0.0.0.0_8080',
    routeConfig: 'http.8080',
    virtualHost: 'example.com:80',
    cluster: 'outbound|80||a.default.svc.cluster.local',
  });
  assert.equal(simulate(r, { port: 80, host: 'example.com' }).error, 'no-listener');
});

test('AUTO_PASSTHROUGH routes the SNI outbound_.<port>_.<subset>_.<host> to that cluster, only for Istio mTLS ALPNs', () => {
  const r = compileGateway(
    gatewayYaml(
      'eastwest',
      'istio-system',
      `port: {number: 15443, name: tls, protocol: TLS}\nhosts: ['*.default.svc.cluster.local']\ntls: {mode: AUTO_PASSTHROUGH}`,
    ),
  );
  const sni = 'outbound_.9080_._.productpage.default.svc.cluster.local';
  assert.deepEqual(simulate(r, { port: 15443, sni, alpn: ['istio'] }), { listener: '0.0.0.0_15443', cluster: sni });
  assert.equal(simulate(r, { port: 15443, sni, alpn: ['h2'] }).error, 'no-filter-chain');
  assert.equal(
    simulate(r, { port: 15443, sni: 'productpage.default.svc.cluster.local', alpn: ['istio'] }).error,
    'no-filter-chain',
  );
});

test('a VirtualService bound only to a gateway no longer routes sidecars; with "mesh" it routes both', () => {
  const r = compileGateway(
    gatewayYaml('gw', 'default', httpServer('a.default.svc.cluster.local')) +
      vs('gateway-only', ['a'], ['gw'], 'b', 80) +
      vs('both', ['b'], ['gw', 'mesh'], 'a', 80),
  );
  const sidecar = {
    id: 'sidecar~10.244.0.99~client.default~default.svc.cluster.local',
    metadata: { NAMESPACE: 'default', LABELS: {} },
  };
  const routes = simulateSidecarRoute(r, sidecar);
  assert.equal(routes.get('a.default.svc.cluster.local'), 'outbound|80||a.default.svc.cluster.local');
  assert.equal(routes.get('b.default.svc.cluster.local'), 'outbound|80||a.default.svc.cluster.local');
  assert.equal(
    simulate(r, { port: 80, host: 'a.default.svc.cluster.local' }).cluster,
    'outbound|80||b.default.svc.cluster.local',
  );
});

/* eslint-disable-next-line @typescript-eslint/no-explicit-any -- decoded config_dump JSON */
type Json = any;

/** host → first cluster of the sidecar's route config "80". */
function simulateSidecarRoute(r: ReturnType<typeof compileGateway>, node: TestNode): Map<string, string> {
  const rc: Json = served(r, node).resources.routes.get('80');
  const out = new Map<string, string>();
  for (const vh of rc.virtual_hosts) out.set(vh.name.split(':')[0], vh.routes[0].route.cluster);
  return out;
}

test("istiod's analyzer findings: a selector matching no Pod, a VirtualService host no server allows", () => {
  const r = compileGateway(
    `---
apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: egress, namespace: istio-system}
spec:
  selector: {istio: egressgateway}
  servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: ["*"]}]
` +
      gatewayYaml('gw', 'default', httpServer('*.example.com')) +
      vs('a', ['a.example.com', 'a.other.org'], ['gw'], 'a', 80),
  );
  const found = r.diagnostics
    .filter((d) => d.code === 'gateway-selects-nothing' || d.code === 'host-not-in-gateway')
    .map((d) => [d.code, `${d.namespace}/${d.name}`, d.field, d.message]);
  assert.deepEqual(found, [
    [
      'gateway-selects-nothing',
      'istio-system/egress',
      'spec.selector',
      'selector {"istio":"egressgateway"} matches no Pod in the inputs; no gateway proxy gets this Gateway\'s config',
    ],
    [
      'host-not-in-gateway',
      'default/a',
      'spec.gateways[0]',
      'hosts a.other.org are not allowed by any server of gateway default/gw; they are not served there',
    ],
  ]);
});

test('listeners per port and bind address (istiod TestBuildGatewayListeners "gateway with bind", "multiple ports")', () => {
  const r = compileGateway(
    gatewayYaml(
      'gw',
      'default',
      httpServer('a.example.com', 80),
      `port: {number: 8080, name: http-ext, protocol: HTTP}\nhosts: [externalgatewayclient.com]`,
      `port: {number: 8080, name: http-int, protocol: HTTP}\nbind: 127.0.0.1\nhosts: [internalmesh.svc.cluster.local]`,
      `port: {number: 801, name: http-801, protocol: HTTP}\nhosts: [a.example.com]`,
    ),
  );
  const { resources } = served(r, INGRESS_NODE);
  assert.deepEqual([...resources.listeners.keys()], ['0.0.0.0_80', '0.0.0.0_801', '0.0.0.0_8080', '127.0.0.1_8080']);
  assert.deepEqual([...resources.routes.keys()], ['http.80', 'http.801', 'http.8080', 'http.8080.127.0.0.1']);
  const bound: Json = resources.listeners.get('127.0.0.1_8080');
  assert.equal(bound.address.socket_address.address, '127.0.0.1');
});

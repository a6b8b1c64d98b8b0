/**
 * Outbound protocol sniffing (src/compile/sniffing.ts): a service port that names no protocol gets,
 * on its own addresses, istiod's two chains — TCP, and HTTP/1.1 picked by the HTTP inspector, routed by
 * the `<host>:<port>` route config (istiod's buildSidecarOutboundListener, ListenerProtocolAuto, and
 * getVirtualHostsForSniffedServicePort). Checked through the served snapshot (so the consistency and
 * Envoy checks ran) and through `explain`, which follows Envoy's matching rules.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { explain, type ExplainRequest } from '../../src/explain/index.js';
import { explainRequest } from '../helpers/explain-request.js';
import { served } from '../helpers/mesh.js';
import { endpointSliceYaml } from './incremental-helpers.js';
import { compileYaml, pod, sidecarNode } from './security/mesh.js';

type Json = Record<string, unknown>;

const service = (name: string, ip: string | 'None', ports: string) => `apiVersion: v1
kind: Service
metadata: { name: ${name}, namespace: shop }
spec:
  clusterIP: ${ip}
  selector: { app: ${name} }
  ports: ${ports}`;

/** A DNS ServiceEntry of shop whose port `web` names no protocol, with an address when given. */
const dnsEntry = (name: string, host: string, port: number, address?: string) => `apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: { name: ${name}, namespace: shop }
spec:
  hosts: [${host}]
${address ? `  addresses: [${address}]\n` : ''}  ports: [{ number: ${port}, name: web }]
  resolution: DNS`;

const slice = (name: string, ip: string, port: number) => endpointSliceYaml(`${name}-1`, name, { port }, [ip], 'shop');

/** cart: port 80 names no protocol; a VirtualService splits its HTTP between two subsets. */
const CART = [
  service('cart', '10.96.7.4', '[{ port: 80, targetPort: 8080 }]'),
  pod('cart-v1', '10.244.1.4', { app: 'cart', version: 'v1' }, 'shop', [8080]),
  slice('cart', '10.244.1.4', 8080),
  `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: { name: cart, namespace: shop }
spec:
  host: cart
  subsets: [{ name: v1, labels: { version: v1 } }, { name: v2, labels: { version: v2 } }]`,
  `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: { name: cart, namespace: shop }
spec:
  hosts: [cart]
  http:
  - match: [{ headers: { canary: { exact: "yes" } } }]
    route: [{ destination: { host: cart, subset: v2 } }]
  - route: [{ destination: { host: cart, subset: v1 } }]`,
];
const CLIENT = sidecarNode('client-0', '10.244.9.9', { app: 'client' }, 'shop');
const CLIENT_POD = pod('client-0', '10.244.9.9', { app: 'client' }, 'shop');

const request = (over: Partial<ExplainRequest>): ExplainRequest =>
  explainRequest({
    host: 'cart.shop.svc.cluster.local',
    port: 80,
    destinationIp: '10.96.7.4',
    sourceIp: '10.244.9.9',
    ...over,
  });

test('a port naming no protocol: its cluster IP listener sniffs HTTP into the <host>:<port> route config, the rest is TCP', () => {
  const result = compileYaml(...CART, CLIENT_POD);
  const { resources } = served(result, CLIENT);
  const listener = resources.listeners.get('10.96.7.4_80') as Json;
  assert.ok(listener, 'the cluster IP listener');
  assert.deepEqual(
    (listener.listener_filters as Json[]).map((f) => f.name),
    ['envoy.filters.listener.http_inspector'],
  );
  const chains = listener.filter_chains as Json[];
  assert.equal(chains.length, 1, 'the HTTP chain; the TCP one is the default chain');
  assert.deepEqual(chains[0]?.filter_chain_match, {
    transport_protocol: 'raw_buffer',
    application_protocols: ['http/1.1'],
  });
  const hcm = ((chains[0]?.filters as Json[])[0]?.typed_config ?? {}) as Json;
  assert.deepEqual((hcm.rds as Json).route_config_name, 'cart.shop.svc.cluster.local:80');
  const tcp = (((listener.default_filter_chain as Json).filters as Json[])[0]?.typed_config ?? {}) as Json;
  assert.equal(tcp.cluster, 'outbound|80||cart.shop.svc.cluster.local');

  // istiod's sniffed route config: the service's virtual host alone, domain `*`, no catch-all.
  const config = resources.routes.get('cart.shop.svc.cluster.local:80') as Json;
  const vhosts = config.virtual_hosts as Json[];
  assert.deepEqual(
    vhosts.map((v) => [v.name, v.domains]),
    [['cart.shop.svc.cluster.local:80', ['*']]],
  );
  assert.equal(resources.routes.has('80'), false, 'no HTTP service uses port 80: no listener asks for "80"');
  assert.deepEqual(
    result.diagnostics.filter((d) => d.code === 'protocol-not-sniffed'),
    [],
    'the routes apply: nothing to warn about',
  );

  // Where Envoy takes it: HTTP by the VirtualService, anything else to the service's cluster.
  const canary = explain(resources, request({ headers: { canary: 'yes' } }));
  assert.equal(canary.outcome, 'routed');
  assert.equal(canary.listener?.name, '10.96.7.4_80');
  assert.equal(canary.routeConfig?.name, 'cart.shop.svc.cluster.local:80');
  assert.deepEqual(
    canary.clusters.map((c) => c.name),
    ['outbound|80|v2|cart.shop.svc.cluster.local'],
  );
  const plain = explain(resources, request({}));
  assert.deepEqual(
    plain.clusters.map((c) => c.name),
    ['outbound|80|v1|cart.shop.svc.cluster.local'],
  );
  // Other bytes, and h2c (which the cluster, shared with gateways, would send on as HTTP/1.1), go
  // through untouched as before.
  for (const protocol of ['tcp', 'h2c'] as const) {
    const raw = explain(resources, request({ protocol }));
    assert.equal(raw.outcome, 'tcp_proxy', protocol);
    assert.deepEqual(
      raw.clusters.map((c) => c.name),
      ['outbound|80||cart.shop.svc.cluster.local'],
      protocol,
    );
  }
});

test('a port naming no protocol shares its number with an HTTP service: "<port>" routes to both (IsHTTPOrSniffed)', () => {
  const result = compileYaml(...CART, service('web', '10.96.7.5', '[{ name: http, port: 80 }]'), CLIENT_POD);
  const { resources } = served(result, CLIENT);
  const port80 = resources.routes.get('80') as Json;
  assert.deepEqual(
    (port80.virtual_hosts as Json[]).map((v) => v.name),
    ['cart.shop.svc.cluster.local:80', 'web.shop.svc.cluster.local:80', 'allow_any'],
  );
  assert.ok(resources.listeners.has('0.0.0.0_80'));
  assert.ok(resources.routes.has('cart.shop.svc.cluster.local:80'));
  // Envoy prefers the exact address: cart's own listener sniffs, web goes through the wildcard one.
  assert.equal(explain(resources, request({})).listener?.name, '10.96.7.4_80');
  const web = explain(resources, request({ host: 'web.shop.svc.cluster.local', destinationIp: '10.96.7.5' }));
  assert.equal(web.listener?.name, '0.0.0.0_80');
  assert.deepEqual(
    web.clusters.map((c) => c.name),
    ['outbound|80||web.shop.svc.cluster.local'],
  );
});

test('a headless service naming no protocol sniffs on each pod IP listener', () => {
  const result = compileYaml(
    service('db', 'None', '[{ port: 7000 }]'),
    pod('db-0', '10.244.2.7', { app: 'db' }, 'shop', [7000]),
    slice('db', '10.244.2.7', 7000),
    CLIENT_POD,
  );
  const { resources } = served(result, CLIENT);
  const listener = resources.listeners.get('10.244.2.7_7000') as Json;
  const chains = listener.filter_chains as Json[];
  const rds = chains.map(
    (c) => (((c.filters as Json[])[0]?.typed_config as Json).rds as Json | undefined)?.route_config_name,
  );
  assert.ok(rds.includes('db.shop.svc.cluster.local:7000'));
  assert.ok(resources.routes.has('db.shop.svc.cluster.local:7000'));
});

test('ServiceEntries: on their addresses as Services, without any on 0.0.0.0_<port> through "<port>"; well-known ports stay TCP', () => {
  const result = compileYaml(
    service('mysql', '10.96.7.6', '[{ port: 3306 }]'),
    dnsEntry('ext', 'api.example.com', 8000),
    dnsEntry('vip', 'vip.example.com', 8001, '240.0.0.9'),
    `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: { name: ext, namespace: shop }
spec:
  hosts: [api.example.com, vip.example.com]
  http: [{ timeout: 3s, route: [{ destination: { host: api.example.com } }] }]`,
    CLIENT_POD,
  );
  const { resources } = served(result, CLIENT);
  const mysql = resources.listeners.get('10.96.7.6_3306') as Json;
  assert.equal(mysql.listener_filters, undefined, 'a TCP listener: no inspector delays a server-first protocol');
  assert.equal(resources.routes.has('mysql.shop.svc.cluster.local:3306'), false);

  // No address: the wildcard listener's HTTP chain asks for "8000", which holds the entry's host.
  const wildcard = resources.listeners.get('0.0.0.0_8000') as Json;
  assert.deepEqual(((wildcard.filter_chains as Json[])[0]?.filter_chain_match as Json).application_protocols, [
    'http/1.1',
  ]);
  assert.deepEqual(
    ((resources.routes.get('8000') as Json).virtual_hosts as Json[]).map((v) => v.name),
    ['api.example.com:8000', 'allow_any'],
  );
  const toApi = (protocol: ExplainRequest['protocol']) =>
    explain(resources, request({ host: 'api.example.com', port: 8000, destinationIp: '93.184.216.34', protocol }));
  const http = toApi('http/1.1');
  assert.equal(http.routeConfig?.name, '8000');
  assert.deepEqual(
    http.clusters.map((c) => c.name),
    ['outbound|8000||api.example.com'],
  );
  assert.ok(
    http.provenance.some((o) => o.kind === 'VirtualService' && o.name === 'ext'),
    'the VirtualService route applies',
  );
  assert.equal(toApi('tcp').outcome, 'tcp_proxy');
  assert.deepEqual(
    toApi('tcp').clusters.map((c) => c.name),
    ['outbound|8000||api.example.com'],
  );

  // An address of its own: sniffed there, as a Service's cluster IP.
  assert.ok(resources.routes.has('vip.example.com:8001'));
  assert.equal(
    explain(resources, request({ host: 'vip.example.com', port: 8001, destinationIp: '240.0.0.9' })).routeConfig?.name,
    'vip.example.com:8001',
  );
  // istiod's validation warning about the entry without addresses, and nothing about lost routes.
  assert.deepEqual(
    result.diagnostics.filter((d) => d.severity !== 'info').map((d) => [d.code, d.name]),
    [['tcp-port-without-address', 'ext']],
  );
});

test('a Sidecar: its catch-all egress listener sniffs as without one, and on a bind through the first service', () => {
  const sidecar = (bind: string) => `apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: { name: default, namespace: shop }
spec:
  egress: [{ ${bind}hosts: ["./*"] }]`;
  const scoped = served(compileYaml(...CART, CLIENT_POD, sidecar('')), CLIENT).resources;
  assert.equal(
    explain(scoped, request({ headers: { canary: 'yes' } })).routeConfig?.name,
    'cart.shop.svc.cluster.local:80',
  );
  assert.ok(scoped.routes.has('cart.shop.svc.cluster.local:80'));

  // istiod on a bind: one listener for the port, whose HTTP chain is the first service's.
  const bound = compileYaml(...CART, CLIENT_POD, sidecar('bind: 127.0.0.2, captureMode: NONE, '));
  const { resources } = served(bound, CLIENT);
  const listener = resources.listeners.get('127.0.0.2_80') as Json;
  assert.deepEqual(
    (listener.listener_filters as Json[]).map((f) => f.name),
    ['envoy.filters.listener.http_inspector'],
  );
  const canary = explain(resources, request({ destinationIp: '127.0.0.2', headers: { canary: 'yes' } }));
  assert.equal(canary.routeConfig?.name, 'cart.shop.svc.cluster.local:80');
  assert.deepEqual(
    canary.clusters.map((c) => c.name),
    ['outbound|80|v2|cart.shop.svc.cluster.local'],
  );
});

test('inbound, a port naming no protocol is sniffed as istiod does: plaintext HTTP and istio-http mTLS reach an HTTP chain, other bytes the TCP one', () => {
  const result = compileYaml(...CART, CLIENT_POD);
  const { resources } = served(result, sidecarNode('cart-v1', '10.244.1.4', { app: 'cart', version: 'v1' }, 'shop'));
  const inbound = (over: Partial<ExplainRequest>) =>
    explain(resources, request({ direction: 'inbound', destinationIp: '10.244.1.4', port: 8080, ...over }));
  const chainKind = (e: ReturnType<typeof explain>) =>
    e.filterChain === undefined ? 'none' : e.outcome === 'tcp_proxy' ? 'tcp' : 'http';
  assert.equal(chainKind(inbound({})), 'http', 'plaintext HTTP/1.1');
  assert.deepEqual(
    inbound({}).clusters.map((c) => c.name),
    ['inbound|8080||'],
  );
  assert.equal(chainKind(inbound({ protocol: 'tcp' })), 'tcp', 'other plaintext bytes');
  assert.equal(
    chainKind(inbound({ tls: true, alpn: ['istio-http/1.1'] })),
    'http',
    "an istiod client's HTTP over mTLS",
  );
  // meshsnap's own sidecars send no istio-http ALPN (stock Envoy has no istio.alpn filter): TCP.
  assert.equal(chainKind(inbound({ tls: true, alpn: ['istio-peer-exchange', 'istio'] })), 'tcp');
  const listener = resources.listeners.get('virtualInbound') as Json;
  const names = (listener.listener_filters as Json[]).map((f) => f.name);
  assert.ok(names.includes('envoy.filters.listener.http_inspector'), names.join(' '));
});

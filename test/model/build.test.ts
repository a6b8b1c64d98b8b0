import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Diagnostics } from '../../src/model/diagnostics.js';
import { buildInputSet } from '../../src/inputs/load.js';
import { parseDocuments, type RawDocument } from '../../src/inputs/parse.js';
import { buildServiceModel, portProtocol } from '../../src/model/build.js';
import type { InputSet } from '../../src/model/inputs.js';
import type { ServiceModel } from '../../src/model/service-model.js';
import { BOOKINFO_STATE } from '../helpers/paths.js';

function model(text: string): { model: ServiceModel; inputs: InputSet; diags: Diagnostics } {
  const inputs = buildInputSet(parseDocuments(text, 'm.yaml').docs);
  assert.deepEqual(
    inputs.diagnostics.filter((d) => d.severity === 'error'),
    [],
  );
  const diags = new Diagnostics();
  return { model: buildServiceModel(inputs, diags), inputs, diags };
}

test('bookinfo: hostnames, protocols, reviews endpoints with version labels', () => {
  const { model: m } = model(readFileSync(BOOKINFO_STATE, 'utf8'));
  assert.deepEqual(
    m.services.map((s) => s.hostname),
    [
      'details.default.svc.cluster.local',
      'istio-ingressgateway.istio-system.svc.cluster.local',
      'productpage.default.svc.cluster.local',
      'ratings.default.svc.cluster.local',
      'reviews.default.svc.cluster.local',
    ],
  );
  const reviews = m.byHostname.get('reviews.default.svc.cluster.local')!;
  assert.deepEqual(
    [reviews.clusterIP, reviews.headless, reviews.ports],
    ['10.96.10.3', false, [{ name: 'http', port: 9080, targetPort: 9080, protocol: 'HTTP' }]],
  );
  const eps = m.endpoints.get(reviews.hostname)!.get(9080)!;
  assert.deepEqual(
    eps.map((e) => [e.address, e.port, e.labels['version'], e.health, e.tlsMode, e.serviceAccount]),
    [
      ['10.244.0.13', 9080, 'v1', 'HEALTHY', 'istio', 'bookinfo-reviews'],
      ['10.244.0.14', 9080, 'v2', 'HEALTHY', 'istio', 'bookinfo-reviews'],
      ['10.244.0.15', 9080, 'v3', 'HEALTHY', 'istio', 'bookinfo-reviews'],
    ],
  );
  const gw = m.byHostname.get('istio-ingressgateway.istio-system.svc.cluster.local')!;
  assert.deepEqual(
    gw.ports.map((p) => [p.port, p.protocol]),
    [
      [80, 'HTTP2'],
      [443, 'HTTPS'],
      [15021, 'TCP'],
    ],
  );
  // targetPort resolved from the slice: service port 80 → pod port 8080.
  assert.deepEqual(
    m.endpoints
      .get(gw.hostname)!
      .get(80)!
      .map((e) => [e.address, e.port, e.tlsMode]),
    [['10.244.0.20', 8080, 'disabled']],
  );
  assert.deepEqual(m.namespaces, ['default', 'istio-system']);
  assert.equal(m.workloads.length, 7);
});

test('port protocol as istiod picks it', () => {
  const cases: [Parameters<typeof portProtocol>[0], string | undefined][] = [
    [{ name: 'http', protocol: 'TCP' }, 'HTTP'],
    [{ name: 'HTTP2-web', protocol: 'TCP' }, 'HTTP2'],
    [{ name: 'grpc-web-x', protocol: 'TCP' }, 'GRPC-Web'],
    [{ name: 'grpc', protocol: 'TCP' }, 'GRPC'],
    [{ name: 'https-x', protocol: 'TCP' }, 'HTTPS'],
    [{ name: 'tls', protocol: 'TCP' }, 'TLS'],
    [{ name: 'mongo', protocol: 'TCP' }, 'Mongo'],
    [{ name: 'redis-main', protocol: 'TCP' }, 'Redis'],
    [{ name: 'mysql', protocol: 'TCP' }, 'MySQL'],
    [{ name: 'tcp-db', protocol: 'TCP' }, 'TCP'],
    [{ name: 'http', protocol: 'UDP' }, 'UDP'],
    [{ name: 'tcp', protocol: 'TCP', appProtocol: 'http' }, 'HTTP'],
    [{ name: 'http', protocol: 'TCP', appProtocol: 'kubernetes.io/h2c' }, 'HTTP2'],
    [{ name: 'x', protocol: 'TCP', appProtocol: 'kubernetes.io/ws' }, 'HTTP'],
    [{ protocol: 'TCP' }, undefined],
    [{ name: 'web', protocol: 'TCP' }, undefined],
    [{ name: 'constructor', protocol: 'TCP' }, undefined],
  ];
  for (const [port, want] of cases) assert.equal(portProtocol(port), want, JSON.stringify(port));
});

const SVC = (name: string, ports: string, extra = ''): string =>
  `apiVersion: v1\nkind: Service\nmetadata: { name: ${name}, namespace: shop }\nspec:\n  ${extra}ports: ${ports}\n`;

test('unnamed port: TCP with an info diagnostic naming the port; endpoints from the only slice port', () => {
  const { model: m, diags } = model(`${SVC('cart', '[{ port: 80, targetPort: 8080 }]')}---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: cart-1, namespace: shop, labels: { kubernetes.io/service-name: cart } }
addressType: IPv4
ports: [{ port: 8080 }]
endpoints:
- { addresses: [10.0.0.2], conditions: { ready: false, serving: true, terminating: true }, zone: z9 }
- { addresses: [10.0.0.1] }
- { addresses: [10.0.0.3], conditions: { ready: false } }
- { addresses: [10.0.0.1] }
`);
  // TCP here; istiod would sniff it (the compile warns where http routes would have applied).
  assert.deepEqual(m.services[0]!.ports, [{ port: 80, targetPort: 8080, protocol: 'TCP', protocolDefaulted: true }]);
  assert.deepEqual(
    diags.all.map((d) => [d.severity, d.code, d.kind, d.namespace, d.name, d.field, d.file]),
    [['info', 'protocol-defaulted', 'Service', 'shop', 'cart', 'spec.ports[0]', 'm.yaml']],
  );
  const eps = m.endpoints.get('cart.shop.svc.cluster.local')!.get(80)!;
  assert.deepEqual(
    eps.map((e) => [e.address, e.port, e.health, e.locality.zone, e.tlsMode]),
    [
      ['10.0.0.1', 8080, 'HEALTHY', '', 'disabled'],
      ['10.0.0.2', 8080, 'DRAINING', 'z9', 'disabled'],
      ['10.0.0.3', 8080, 'UNHEALTHY', '', 'disabled'],
    ],
  );
});

test('named ports match slice ports by name; pods found by targetRef or IP; locality from node and istio-locality', () => {
  const { model: m } =
    model(`${SVC('api', '[{ name: http-api, port: 80, targetPort: web }, { name: grpc, port: 9000 }]', 'clusterIP: None\n  ')}---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: api-1, namespace: shop, labels: { kubernetes.io/service-name: api } }
addressType: IPv4
ports: [{ name: grpc, port: 9001 }, { name: http-api, port: 8080 }]
endpoints:
- { addresses: [10.0.1.1], nodeName: n1, targetRef: { kind: Pod, name: api-a } }
- { addresses: [10.0.1.2], nodeName: n1 }
---
apiVersion: v1
kind: Node
metadata: { name: n1, labels: { topology.kubernetes.io/region: eu, topology.kubernetes.io/zone: eu-1, topology.istio.io/subzone: rack2 } }
---
apiVersion: v1
kind: Pod
metadata: { name: api-a, namespace: shop, labels: { app: api, version: v1, security.istio.io/tlsMode: istio } }
spec: { serviceAccountName: api-sa }
status: { podIP: 10.0.1.1, conditions: [{ type: Ready, status: "True" }] }
---
apiVersion: v1
kind: Pod
metadata: { name: api-b, namespace: shop, labels: { app: api, version: v2, istio-locality: us.us-1.r1 } }
status: { podIPs: [{ ip: 10.0.1.2 }] }
`);
  const s = m.services[0]!;
  assert.deepEqual(
    [s.headless, s.clusterIP, s.ports.map((p) => [p.port, p.protocol])],
    [
      true,
      undefined,
      [
        [80, 'HTTP'],
        [9000, 'GRPC'],
      ],
    ],
  );
  const web = m.endpoints.get(s.hostname)!.get(80)!;
  assert.deepEqual(
    web.map((e) => [e.address, e.port, e.labels['version'], e.podName, e.serviceAccount, e.tlsMode, e.locality]),
    [
      ['10.0.1.1', 8080, 'v1', 'api-a', 'api-sa', 'istio', { region: 'eu', zone: 'eu-1', subzone: 'rack2' }],
      ['10.0.1.2', 8080, 'v2', 'api-b', 'default', 'disabled', { region: 'us', zone: 'us-1', subzone: 'r1' }],
    ],
  );
  assert.deepEqual(
    m.endpoints
      .get(s.hostname)!
      .get(9000)!
      .map((e) => e.port),
    [9001, 9001],
  );
  assert.deepEqual(
    m.workloads.map((w) => [w.name, w.ips]),
    [
      ['api-a', ['10.0.1.1']],
      ['api-b', ['10.0.1.2']],
    ],
  );
});

test('legacy Endpoints are used only when no EndpointSlice exists for the service', () => {
  const endpoints = (name: string): string => `---
apiVersion: v1
kind: Endpoints
metadata: { name: ${name}, namespace: shop }
subsets:
- addresses: [{ ip: 10.0.2.1 }]
  notReadyAddresses: [{ ip: 10.0.2.2 }]
  ports: [{ name: http, port: 8080 }]
`;
  const slice = `---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: b-1, namespace: shop, labels: { kubernetes.io/service-name: b } }
addressType: IPv4
ports: [{ name: http, port: 8081 }]
endpoints: [{ addresses: [10.0.3.1] }]
`;
  const { model: m } =
    model(`${SVC('a', '[{ name: http, port: 80 }]')}---\n${SVC('b', '[{ name: http, port: 80 }]')}${endpoints('a')}${endpoints('b')}${slice}---
apiVersion: v1
kind: Namespace
metadata: { name: empty }
`);
  assert.deepEqual(
    m.endpoints
      .get('a.shop.svc.cluster.local')!
      .get(80)!
      .map((e) => [e.address, e.port, e.health]),
    [
      ['10.0.2.1', 8080, 'HEALTHY'],
      ['10.0.2.2', 8080, 'UNHEALTHY'],
    ],
  );
  assert.deepEqual(
    m.endpoints
      .get('b.shop.svc.cluster.local')!
      .get(80)!
      .map((e) => [e.address, e.port]),
    [['10.0.3.1', 8081]],
  );
  assert.deepEqual(m.namespaces, ['empty', 'shop']);
});

test('domainSuffix from the mesh config names the hosts', () => {
  const { model: m } = model(
    `${SVC('a', '[{ name: http, port: 80 }]')}---\napiVersion: meshsnap.dev/v1alpha1\nkind: MeshConfig\nspec: { domainSuffix: corp.local }\n`,
  );
  assert.deepEqual(
    m.services.map((s) => s.hostname),
    ['a.shop.svc.corp.local'],
  );
});

test('10k services with 3 endpoints each: every service and its endpoints are joined', () => {
  const docs: RawDocument[] = [];
  const o = (object: Record<string, unknown>): void => void docs.push({ file: 'gen', index: docs.length, object });
  for (let i = 0; i < 10_000; i++) {
    const ns = `ns${i % 50}`;
    const name = `svc${i}`;
    o({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace: ns },
      spec: {
        clusterIP: `10.${(i >> 8) & 255}.${i & 255}.1`,
        selector: { app: name },
        ports: [{ name: 'http', port: 80, targetPort: 8080 }],
      },
    });
    const endpoints = [];
    for (let k = 0; k < 3; k++) {
      const ip = `10.200.${i % 250}.${k}-${i}`;
      o({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `${name}-${k}`, namespace: ns, labels: { app: name } },
        status: { podIP: ip, conditions: [{ type: 'Ready', status: 'True' }] },
      });
      endpoints.push({ addresses: [ip], targetRef: { kind: 'Pod', name: `${name}-${k}`, namespace: ns } });
    }
    o({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: `${name}-x`, namespace: ns, labels: { 'kubernetes.io/service-name': name } },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: 8080 }],
      endpoints,
    });
  }
  const inputs = buildInputSet(docs);
  const m = buildServiceModel(inputs, new Diagnostics());
  assert.equal(m.services.length, 10_000);
  assert.equal(m.endpoints.get('svc42.ns42.svc.cluster.local')!.get(80)!.length, 3);
  // Speed is measured by the benchmark (bench/), not here: a timed assertion flakes on a shared machine.
});

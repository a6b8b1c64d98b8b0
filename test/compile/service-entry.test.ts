/**
 * ServiceEntry and WorkloadEntry facts, after istiod's conversion_test.go (convertServices,
 * convertEndpoints, WorkloadEntry → endpoint), controller.go (workloadSelector over WorkloadEntries
 * and Pods, WorkloadEntry health, Kubernetes Services selecting WorkloadEntries), cluster_builder.go
 * (DNS/STATIC/NONE clusters) and listener.go (headless per-pod listeners); and incremental ==
 * full compile with entries in the inputs.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compile, createContext } from '../../src/compile/index.js';
import {
  applyCompileDelta,
  IncrementalCompiler,
  withReplaced,
  type IncrementalResult,
} from '../../src/compile/incremental.js';
import type { CompileOutput } from '../../src/compile/types.js';
import { buildInputSet, parseDocuments } from '../../src/inputs/index.js';
import { Diagnostics } from '../../src/model/diagnostics.js';
import type { InputSet } from '../../src/model/inputs.js';
import type { Pod } from '../../src/model/k8s.js';
import type { MeshEndpoint } from '../../src/model/service-model.js';
import { envoy } from '../../src/xds/proto.js';
import { assertSameOutput } from './incremental-helpers.js';

const { DiscoveryType, LbPolicy } = envoy.config.cluster.v3.Cluster;

const load = (text: string): InputSet => buildInputSet(parseDocuments(text, 'se.yaml').docs);
const model = (text: string) => createContext(load(text), new Diagnostics()).model;
const at = (eps: readonly MeshEndpoint[] | undefined) => (eps ?? []).map((e) => `${e.address}:${e.port}`);

const POD = (name: string, ip: string, labels: string, ports = '[]') => `apiVersion: v1
kind: Pod
metadata: { name: ${name}, namespace: ns1, labels: ${labels} }
spec: { serviceAccountName: ${name}, containers: [{ name: c, image: x, ports: ${ports} }] }
status: { phase: Running, podIP: ${ip}, podIPs: [{ ip: ${ip} }], conditions: [{ type: Ready, status: "True" }] }`;
const WE = (name: string, spec: string, meta = '') => `apiVersion: networking.istio.io/v1
kind: WorkloadEntry
metadata: { name: ${name}, namespace: ns1${meta} }
spec: ${spec}`;
const SE = (name: string, spec: string) => `apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: { name: ${name}, namespace: ns1 }
spec:
${spec}`;
const docs = (...d: string[]) => d.join('\n---\n');

test('each host is a service named by its host, in the entry namespace, with its ports; DNS without endpoints resolves the host', () => {
  const m = model(
    SE(
      'ext',
      '  hosts: [a.example.com, B.example.com]\n  ports: [{ number: 80, name: http, protocol: HTTP, targetPort: 8080 }, { number: 443, name: https, protocol: HTTPS }]\n  resolution: DNS\n  subjectAltNames: [spiffe://x/y]',
    ),
  );
  assert.deepEqual(
    m.services.map((s) => [s.hostname, s.name, s.namespace, s.serviceEntry?.resolution, s.serviceEntry?.location]),
    [
      ['a.example.com', 'a.example.com', 'ns1', 'DNS', 'MESH_EXTERNAL'],
      ['b.example.com', 'b.example.com', 'ns1', 'DNS', 'MESH_EXTERNAL'],
    ],
  );
  assert.deepEqual(
    m.byHostname.get('a.example.com')?.ports.map((p) => [p.port, p.targetPort, p.protocol]),
    [
      [80, 8080, 'HTTP'],
      [443, 443, 'HTTPS'],
    ],
  );
  assert.deepEqual(at(m.endpoints.get('a.example.com')?.get(80)), ['a.example.com:8080']);
  assert.deepEqual(at(m.endpoints.get('b.example.com')?.get(443)), ['b.example.com:443']);
  assert.deepEqual(m.byHostname.get('a.example.com')?.serviceEntry?.subjectAltNames, ['spiffe://x/y']);
});

test('endpoint ports: the named port of the workload, else targetPort, else the port number', () => {
  const m = model(
    SE(
      'static',
      '  hosts: [db.internal]\n  addresses: [240.0.0.1]\n  ports: [{ number: 3306, name: mysql, protocol: TCP }, { number: 80, name: http, protocol: HTTP, targetPort: 8080 }]\n  resolution: STATIC\n  endpoints: [{ address: 10.0.0.1, ports: { mysql: 13306 } }, { address: 10.0.0.2 }]',
    ),
  );
  assert.deepEqual(at(m.endpoints.get('db.internal')?.get(3306)), ['10.0.0.1:13306', '10.0.0.2:3306']);
  assert.deepEqual(at(m.endpoints.get('db.internal')?.get(80)), ['10.0.0.1:8080', '10.0.0.2:8080']);
});

test('workloadSelector picks healthy WorkloadEntries and Pods of the namespace; DNS-named entries only for DNS entries', () => {
  const text = docs(
    SE(
      'static',
      '  hosts: [vm.internal]\n  ports: [{ number: 80, name: http, protocol: HTTP }]\n  resolution: STATIC\n  workloadSelector: { labels: { app: vm } }',
    ),
    SE(
      'dns',
      '  hosts: [vm-dns.internal]\n  ports: [{ number: 80, name: http, protocol: HTTP }]\n  resolution: DNS\n  workloadSelector: { labels: { app: vm } }',
    ),
    WE('vm-1', '{ address: 10.0.0.1, labels: { app: vm }, serviceAccount: vm-sa, weight: 3, locality: r1/z1 }'),
    WE('vm-dns', '{ address: vm.example.com, labels: { app: vm } }'),
    WE(
      'vm-sick',
      '{ address: 10.0.0.9, labels: { app: vm } }',
      ', annotations: { proxy.istio.io/health-checks-enabled: "true" }',
    ),
    WE('other', '{ address: 10.0.0.7, labels: { app: other } }'),
    POD('vm-pod', '10.244.0.5', '{ app: vm }', '[{ name: http, containerPort: 8081 }]'),
  );
  const m = model(text);
  assert.deepEqual(at(m.endpoints.get('vm.internal')?.get(80)), ['10.0.0.1:80', '10.244.0.5:8081']);
  assert.deepEqual(at(m.endpoints.get('vm-dns.internal')?.get(80)), [
    '10.0.0.1:80',
    '10.244.0.5:8081',
    'vm.example.com:80',
  ]);
  const vm = m.endpoints.get('vm.internal')?.get(80)?.[0];
  assert.deepEqual(
    [vm?.tlsMode, vm?.serviceAccount, vm?.weight, vm?.locality, vm?.workloadName],
    ['istio', 'vm-sa', 3, { region: 'r1', zone: 'z1', subzone: '' }, 'vm-1'],
  );
});

test('a Kubernetes Service selects WorkloadEntries: numeric targetPort unless the entry names the port; named targetPort must be among its ports', () => {
  const svc = `apiVersion: v1
kind: Service
metadata: { name: web, namespace: ns1 }
spec:
  clusterIP: 10.96.0.10
  selector: { app: web }
  ports: [{ name: http, port: 80, targetPort: 8080 }, { name: grpc, port: 90, targetPort: grpc-port }]`;
  const m = model(
    docs(
      svc,
      WE('a', '{ address: 10.0.0.1, labels: { app: web } }'),
      WE('b', '{ address: 10.0.0.2, labels: { app: web }, ports: { http: 9090, grpc-port: 9999 } }'),
      WE('dns', '{ address: web.example.com, labels: { app: web } }'),
    ),
  );
  const host = 'web.ns1.svc.cluster.local';
  assert.deepEqual(at(m.endpoints.get(host)?.get(80)), ['10.0.0.1:8080', '10.0.0.2:9090']);
  assert.deepEqual(at(m.endpoints.get(host)?.get(90)), ['10.0.0.2:9999']);
});

test('clusters: DNS → STRICT_DNS, DNS_ROUND_ROBIN → LOGICAL_DNS (one endpoint), NONE → ORIGINAL_DST with the targetPort, STATIC → EDS', () => {
  const out = compile(
    load(
      docs(
        SE(
          'dns',
          '  hosts: [dns.example.com]\n  ports: [{ number: 443, name: tls, protocol: TLS }]\n  resolution: DNS',
        ),
        SE(
          'rr',
          '  hosts: [rr.example.com]\n  ports: [{ number: 443, name: tls, protocol: TLS }]\n  resolution: DNS_ROUND_ROBIN\n  endpoints: [{ address: lb.example.com }]',
        ),
        SE(
          'none',
          '  hosts: [none.example.com]\n  addresses: [10.1.0.0/16]\n  ports: [{ number: 5432, name: pg, protocol: TCP, targetPort: 5433 }]',
        ),
        SE(
          'static',
          '  hosts: [static.example.com]\n  ports: [{ number: 80, name: http, protocol: HTTP }]\n  resolution: STATIC\n  endpoints: [{ address: 1.2.3.4 }]',
        ),
        SE(
          'nobody',
          '  hosts: [nobody.example.com]\n  ports: [{ number: 80, name: http, protocol: HTTP }]\n  resolution: DNS\n  workloadSelector: { labels: { app: nobody } }',
        ),
      ),
    ),
  ).output;
  const clusters = out.groups.get('outbound')?.clusters;
  const get = (n: string) => clusters?.get(n) as Record<string, unknown> | undefined;
  assert.equal(get('outbound|443||dns.example.com')?.type, DiscoveryType.STRICT_DNS);
  assert.equal(get('outbound|443||rr.example.com')?.type, DiscoveryType.LOGICAL_DNS);
  assert.equal(get('outbound|5432||none.example.com')?.type, DiscoveryType.ORIGINAL_DST);
  assert.equal(get('outbound|5432||none.example.com')?.lb_policy, LbPolicy.CLUSTER_PROVIDED);
  assert.deepEqual(get('outbound|5432||none.example.com')?.original_dst_lb_config, {
    upstream_port_override: { value: 5433 },
  });
  assert.equal(get('outbound|80||static.example.com')?.type, DiscoveryType.EDS);
  assert.equal(out.groups.get('endpoints')?.endpoints.has('outbound|80||static.example.com'), true);
  // A DNS entry selecting nothing: a cluster without hosts (routes name it; istiod sends none, both answer 503).
  assert.deepEqual(get('outbound|80||nobody.example.com')?.load_assignment, {
    cluster_name: 'outbound|80||nobody.example.com',
    endpoints: [],
  });
  const rr = get('outbound|443||rr.example.com')?.load_assignment as { endpoints: { lb_endpoints: unknown[] }[] };
  assert.equal(rr.endpoints.length, 1);
  assert.equal(rr.endpoints[0]?.lb_endpoints.length, 1);
  // MESH_EXTERNAL: no auto mTLS.
  assert.equal(get('outbound|80||static.example.com')?.transport_socket_matches, undefined);
});

test('MESH_INTERNAL entries get auto mTLS over the sidecars of their endpoints; SANs from accounts and subjectAltNames', () => {
  const out = compile(
    load(
      docs(
        SE(
          'internal',
          '  hosts: [vm.internal]\n  location: MESH_INTERNAL\n  ports: [{ number: 80, name: http, protocol: HTTP }]\n  resolution: STATIC\n  subjectAltNames: [spiffe://other/ns/x/sa/y]\n  workloadSelector: { labels: { app: vm } }',
        ),
        WE('vm-1', '{ address: 10.0.0.1, labels: { app: vm }, serviceAccount: vm-sa }'),
      ),
    ),
  ).output;
  const c = out.groups.get('outbound')?.clusters.get('outbound|80||vm.internal') as Record<string, unknown>;
  // The TLS context is packed: read its bytes as text to find the SANs in it.
  const text = JSON.stringify(c.transport_socket_matches, (_k, v: unknown) =>
    v instanceof Uint8Array ? Buffer.from(v).toString('latin1') : v,
  );
  assert.match(text, /tlsMode-istio/);
  assert.match(text, /spiffe:\/\/cluster.local\/ns\/ns1\/sa\/vm-sa/);
  assert.match(text, /spiffe:\/\/other\/ns\/x\/sa\/y/);
});

test('headless services: one outbound listener per pod IP on TCP ports (istiod), no info diagnostic', () => {
  const result = compile(
    load(
      docs(
        `apiVersion: v1
kind: Service
metadata: { name: db, namespace: ns1 }
spec: { clusterIP: None, selector: { app: db }, ports: [{ name: tcp-pg, port: 5432 }] }`,
        POD('db-0', '10.244.0.7', '{ app: db }'),
        POD('db-1', '10.244.0.8', '{ app: db }'),
        `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: db-x, namespace: ns1, labels: { kubernetes.io/service-name: db } }
addressType: IPv4
ports: [{ name: tcp-pg, port: 5432 }]
endpoints:
- { addresses: [10.244.0.7], targetRef: { kind: Pod, name: db-0, namespace: ns1 } }
- { addresses: [10.244.0.8], targetRef: { kind: Pod, name: db-1, namespace: ns1 } }`,
      ),
    ),
  );
  const listeners = result.output.groups.get('outbound-listeners')?.listeners;
  assert.deepEqual(
    [...(listeners?.keys() ?? [])].filter((n) => n.endsWith('_5432')),
    ['10.244.0.7_5432', '10.244.0.8_5432'],
  );
  assert.equal(
    result.diagnostics.some((d) => d.code === 'headless-tcp-port'),
    false,
  );
});

test('incremental == full: a pod a ServiceEntry selects changes its IP, a WorkloadEntry changes', () => {
  const base = load(
    docs(
      SE(
        'pods',
        '  hosts: [pods.internal]\n  addresses: [240.0.0.2]\n  ports: [{ number: 80, name: http, protocol: HTTP }]\n  resolution: STATIC\n  workloadSelector: { labels: { app: vm } }',
      ),
      POD('vm-pod', '10.244.0.5', '{ app: vm }'),
      WE('vm-1', '{ address: 10.0.0.1, labels: { app: vm } }'),
      `apiVersion: v1
kind: Service
metadata: { name: web, namespace: ns1 }
spec: { clusterIP: 10.96.0.10, selector: { app: vm }, ports: [{ name: http, port: 80 }] }`,
    ),
  );
  const inc = new IncrementalCompiler();
  let output = inc.compileFull(base).output;
  // Not the endpoint path (a ServiceEntry selects the pod): compiled in full, handed on as a delta.
  const next = (r: IncrementalResult): CompileOutput =>
    (output = r.kind === 'full' ? r.output : applyCompileDelta(output, r.delta, r.layout));
  const pod = base.pods[0] as Pod;
  const moved = withReplaced(base, 'Pod', { ...pod, ips: ['10.244.0.6'] });
  const r1 = inc.update(moved, [{ kind: 'Pod', namespace: 'ns1', name: 'vm-pod' }]);
  assert.equal(r1.kind, 'delta');
  assertSameOutput(next(r1), compile(moved).output, 'pod moved');
  const we = moved.workloadEntries[0]!;
  const changed = withReplaced(moved, 'WorkloadEntry', { ...we, spec: { ...we.spec, address: '10.0.0.2' } });
  const r2 = inc.update(changed, [{ kind: 'WorkloadEntry', namespace: 'ns1', name: 'vm-1' }]);
  assert.equal(r2.kind, 'delta');
  assertSameOutput(next(r2), compile(changed).output, 'entry changed');
  assert.deepEqual(
    at(createContext(changed, new Diagnostics()).model.endpoints.get('web.ns1.svc.cluster.local')?.get(80)),
    ['10.0.0.2:80'],
  );
});

/** istiod's conversion_test.go entries (TestConvertInstances), as `address:port tlsMode` per service port. */
test("istiod's conversion facts: httpStatic (+ overlay), httpDNSnoEndpoints, dnsTargetPort, httpDNS, tcpNone", () => {
  const entry = (ns: string, name: string, spec: string) =>
    `apiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata: { name: ${name.toLowerCase()}, namespace: ${ns.toLowerCase()} }\nspec:\n${spec}`;
  const tls = '{ security.istio.io/tlsMode: istio }';
  const m = model(
    docs(
      entry(
        'httpStatic',
        'httpStatic',
        `  hosts: ["*.google.com"]
  ports: [{ number: 80, name: http-port, protocol: http }, { number: 8080, name: http-alt-port, protocol: http }]
  resolution: STATIC
  endpoints:
  - { address: 2.2.2.2, ports: { http-port: 7080, http-alt-port: 18080 }, labels: ${tls} }
  - { address: 3.3.3.3, ports: { http-port: 1080 }, labels: ${tls} }
  - { address: 4.4.4.4, ports: { http-port: 1080 }, labels: { foo: bar } }`,
      ),
      entry(
        'httpStatic',
        'httpStaticOverlay',
        `  hosts: ["*.google.com"]
  ports: [{ number: 4567, name: http-port, protocol: http }]
  resolution: STATIC
  endpoints: [{ address: 5.5.5.5, labels: { overlay: bar } }]`,
      ),
      entry(
        'httpDNSnoEndpoints',
        'httpDNSnoEndpoints',
        `  hosts: [google.com, www.wikipedia.org]
  ports: [{ number: 80, name: http-port, protocol: http }, { number: 8080, name: http-alt-port, protocol: http }]
  resolution: DNS
  subjectAltNames: [google.com]`,
      ),
      entry(
        'dnsTargetPort',
        'dnsTargetPort',
        `  hosts: [target.google.com]
  ports: [{ number: 80, name: http-port, protocol: http, targetPort: 8080 }]
  resolution: DNS`,
      ),
      entry(
        'httpDNS',
        'httpDNS',
        `  hosts: ["*.dns.google.com"]
  ports: [{ number: 80, name: http-port, protocol: http }, { number: 8080, name: http-alt-port, protocol: http }]
  resolution: DNS
  endpoints:
  - { address: us.google.com, ports: { http-port: 7080, http-alt-port: 18080 }, labels: ${tls} }
  - { address: uk.google.com, ports: { http-port: 1080 }, labels: ${tls} }
  - { address: de.google.com, labels: { foo: bar, security.istio.io/tlsMode: istio } }`,
      ),
      entry(
        'tcpNone',
        'tcpNone',
        `  hosts: [tcpnone.com]
  addresses: [172.217.0.0/16]
  ports: [{ number: 444, name: tcp-444, protocol: tcp }]`,
      ),
    ),
  );
  const show = (host: string) =>
    Object.fromEntries(
      [...(m.endpoints.get(host) ?? new Map<number, readonly MeshEndpoint[]>())].map(([port, eps]) => [
        port,
        eps.map((e) => `${e.address}:${e.port} ${e.tlsMode}`),
      ]),
    );
  assert.deepEqual(show('*.google.com'), {
    80: ['2.2.2.2:7080 istio', '3.3.3.3:1080 istio', '4.4.4.4:1080 disabled'],
    8080: ['2.2.2.2:18080 istio', '3.3.3.3:8080 istio', '4.4.4.4:8080 disabled'],
    4567: ['5.5.5.5:4567 disabled'],
  });
  assert.deepEqual(
    m.byHostname.get('*.google.com')?.ports.map((p) => p.port),
    [80, 4567, 8080],
  );
  assert.deepEqual(show('google.com'), { 80: ['google.com:80 disabled'], 8080: ['google.com:8080 disabled'] });
  assert.deepEqual(show('www.wikipedia.org'), {
    80: ['www.wikipedia.org:80 disabled'],
    8080: ['www.wikipedia.org:8080 disabled'],
  });
  assert.deepEqual(show('target.google.com'), { 80: ['target.google.com:8080 disabled'] });
  assert.deepEqual(show('*.dns.google.com'), {
    80: ['de.google.com:80 istio', 'uk.google.com:1080 istio', 'us.google.com:7080 istio'],
    8080: ['de.google.com:8080 istio', 'uk.google.com:8080 istio', 'us.google.com:18080 istio'],
  });
  assert.deepEqual(show('tcpnone.com'), { 444: [] });
  assert.deepEqual(m.byHostname.get('tcpnone.com')?.serviceEntry?.addresses, ['172.217.0.0/16']);
});

test("DNS clusters re-resolve at the mesh config's dnsRefreshRate (Istio's 60 s by default)", () => {
  const text = SE(
    'dns',
    '  hosts: [dns.example.com]\n  ports: [{ number: 443, name: tls, protocol: TLS }]\n  resolution: DNS',
  );
  const rate = (extra: string) =>
    (
      compile(load(extra + text))
        .output.groups.get('outbound')
        ?.clusters.get('outbound|443||dns.example.com') as Record<string, unknown>
    ).dns_refresh_rate;
  assert.deepEqual(rate(''), { seconds: 60 });
  const mesh = `apiVersion: v1\nkind: ConfigMap\nmetadata: { name: istio, namespace: istio-system }\ndata:\n  mesh: |\n    dnsRefreshRate: 5s\n---\n`;
  assert.deepEqual(rate(mesh), { seconds: 5 });
});

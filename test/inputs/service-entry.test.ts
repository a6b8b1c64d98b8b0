/**
 * ServiceEntry, WorkloadEntry and WorkloadGroup validation, as istiod's webhook validates them
 * (pkg/config/validation ValidateServiceEntry, ValidateWorkloadEntry, ValidateWorkloadGroup; cases
 * after its validation_test.go): the exact field of each error, the object skipped, the others kept;
 * and what a valid object reads into.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { storedDocument } from '../../src/snapshot/stored-inputs/canonical-object.js';
import { errors, loadText } from './helpers.js';

const se = (spec: string, name = 'se'): string =>
  `apiVersion: networking.istio.io/v1beta1\nkind: ServiceEntry\nmetadata: { name: ${name}, namespace: ns1 }\nspec:\n${spec}`;
const we = (spec: string, extra = ''): string =>
  `apiVersion: networking.istio.io/v1\nkind: WorkloadEntry\nmetadata: { name: vm, namespace: ns1${extra} }\nspec: ${spec}`;

const fieldsOf = (text: string): (string | undefined)[] => errors(loadText(text)).map((d) => d.field);

const HTTP_PORT = '  ports: [{ number: 80, name: http, protocol: HTTP }]\n';

test('a valid DNS entry reads into the model with its defaults (MESH_EXTERNAL)', () => {
  const inputs = loadText(se(`  hosts: [api.example.com]\n${HTTP_PORT}  resolution: DNS\n  exportTo: ["."]`));
  assert.deepEqual(errors(inputs), []);
  assert.equal(inputs.diagnostics.filter((d) => d.code === 'unsupported-kind').length, 0);
  assert.deepEqual(inputs.serviceEntries[0]?.spec, {
    hosts: ['api.example.com'],
    ports: [{ number: 80, protocol: 'HTTP', name: 'http' }],
    location: 'MESH_EXTERNAL',
    resolution: 'DNS',
    exportTo: ['.'],
  });
});

test('resolution defaults to NONE; protocols are read case-insensitively', () => {
  const e = loadText(
    se('  hosts: [a.example.com]\n  addresses: [10.0.0.0/8]\n  ports: [{ number: 9000, name: tcp, protocol: tcp }]'),
  ).serviceEntries[0];
  assert.equal(e?.spec.resolution, 'NONE');
  assert.equal(e?.spec.ports[0]?.protocol, 'TCP');
});

const INVALID: [string, string, (string | undefined)[]][] = [
  ['no hosts', `  hosts: []\n${HTTP_PORT}`, ['spec.hosts']],
  ['the full wildcard host', `  hosts: ["*"]\n${HTTP_PORT}`, ['spec.hosts[0]']],
  ['an invalid host', `  hosts: ["foo_bar.com"]\n${HTTP_PORT}`, ['spec.hosts[0]']],
  ['a bad address', `  hosts: [a.com]\n  addresses: [300.0.0.1]\n${HTTP_PORT}`, ['spec.addresses[0]']],
  [
    'a CIDR with DNS resolution',
    `  hosts: [a.com]\n  addresses: [10.0.0.0/8]\n${HTTP_PORT}  resolution: DNS`,
    ['spec.addresses'],
  ],
  [
    'duplicate port numbers',
    `  hosts: [a.com]\n  ports: [{ number: 80, name: a, protocol: HTTP }, { number: 80, name: b, protocol: HTTP }]`,
    ['spec.ports[1].number'],
  ],
  [
    'duplicate port names',
    `  hosts: [a.com]\n  ports: [{ number: 80, name: a, protocol: HTTP }, { number: 81, name: a, protocol: HTTP }]`,
    ['spec.ports[1].name'],
  ],
  [
    'an unknown protocol',
    `  hosts: [a.com]\n  ports: [{ number: 80, name: a, protocol: FOO }]`,
    ['spec.ports[0].protocol'],
  ],
  ['a port without name', `  hosts: [a.com]\n  ports: [{ number: 80, protocol: HTTP }]`, ['spec.ports[0].name']],
  [
    'endpoints with NONE resolution',
    `  hosts: [a.com]\n${HTTP_PORT}  endpoints: [{ address: 1.1.1.1 }]`,
    ['spec.endpoints'],
  ],
  [
    'endpoints and a workloadSelector',
    `  hosts: [a.com]\n${HTTP_PORT}  resolution: STATIC\n  endpoints: [{ address: 1.1.1.1 }]\n  workloadSelector: { labels: { app: a } }`,
    ['spec'],
  ],
  [
    'a STATIC endpoint with a DNS name',
    `  hosts: [a.com]\n${HTTP_PORT}  resolution: STATIC\n  endpoints: [{ address: vm.example.com }]`,
    ['spec.endpoints[0].address'],
  ],
  [
    'an endpoint port the entry does not define',
    `  hosts: [a.com]\n${HTTP_PORT}  resolution: STATIC\n  endpoints: [{ address: 1.1.1.1, ports: { grpc: 9000 } }]`,
    ['spec.endpoints[0].ports.grpc'],
  ],
  [
    'two endpoints with DNS_ROUND_ROBIN',
    `  hosts: [a.com]\n${HTTP_PORT}  resolution: DNS_ROUND_ROBIN\n  endpoints: [{ address: a.com }, { address: b.com }]`,
    ['spec.endpoints'],
  ],
  [
    'several hosts with a TCP port (not NONE)',
    `  hosts: [a.com, b.com]\n  addresses: [1.1.1.1]\n  ports: [{ number: 9000, name: tcp, protocol: TCP }]\n  resolution: STATIC`,
    ['spec.ports'],
  ],
  // istiod's validation_test.go DYNAMIC_DNS cases.
  [
    'DYNAMIC_DNS and a TCP port',
    `  hosts: ["*.google.com"]\n  ports: [{ number: 80, name: http-valid1, protocol: http }, { number: 81, name: tcp-valid1, protocol: TCP }]\n  resolution: DYNAMIC_DNS`,
    ['spec.ports[1].protocol'],
  ],
  [
    'DYNAMIC_DNS and an HTTPS port',
    `  hosts: ["*.google.com"]\n  ports: [{ number: 443, name: https, protocol: HTTPS }]\n  resolution: DYNAMIC_DNS`,
    ['spec.ports[0].protocol'],
  ],
  [
    'DYNAMIC_DNS and a port without protocol',
    `  hosts: ["*.google.com"]\n  addresses: []\n  ports: [{ number: 8000, name: p }]\n  resolution: DYNAMIC_DNS`,
    ['spec.ports[0].protocol'],
  ],
  ['DYNAMIC_DNS and an FQDN host', `  hosts: [google.com]\n${HTTP_PORT}  resolution: DYNAMIC_DNS`, ['spec.hosts[0]']],
  [
    'DYNAMIC_DNS and endpoints',
    `  hosts: ["*.google.com"]\n${HTTP_PORT}  resolution: DYNAMIC_DNS\n  endpoints: [{ address: 1.1.1.1 }]`,
    ['spec.endpoints'],
  ],
  [
    'DYNAMIC_DNS and an address',
    `  hosts: ["*.google.com"]\n  addresses: [10.10.10.10]\n  ports: [{ number: 80, name: http-valid1, protocol: http }, { number: 8080, name: http-valid2, protocol: http }]\n  resolution: DYNAMIC_DNS`,
    ['spec.addresses'],
  ],
  ['DYNAMIC_DNS and no hosts', `  hosts: []\n${HTTP_PORT}  resolution: DYNAMIC_DNS`, ['spec.hosts', 'spec.hosts']],
  ['an unknown location', `  hosts: [a.com]\n${HTTP_PORT}  location: OUTSIDE`, ['spec.location']],
  ['exportTo * with another namespace', `  hosts: [a.com]\n${HTTP_PORT}  exportTo: ["*", ns2]`, ['spec.exportTo']],
  ['exportTo . and the own namespace', `  hosts: [a.com]\n${HTTP_PORT}  exportTo: [".", ns1]`, ['spec.exportTo[1]']],
  ['exportTo ~ with another', `  hosts: [a.com]\n${HTTP_PORT}  exportTo: ["~", ns2]`, ['spec.exportTo']],
];

for (const [name, spec, fields] of INVALID) {
  test(`ServiceEntry with ${name} is rejected (${fields.join(', ')}), the other documents kept`, () => {
    const ok = se(`  hosts: [ok.example.com]\n${HTTP_PORT}`, 'ok');
    const inputs = loadText([ok, se(spec, 'bad'), ok.replace('name: ok', 'name: ok2')].join('\n---\n'));
    assert.deepEqual(
      errors(inputs).map((d) => [d.kind, d.name, d.index, d.field]),
      fields.map((f) => ['ServiceEntry', 'bad', 1, f]),
    );
    assert.deepEqual(
      inputs.serviceEntries.map((e) => e.meta.name),
      ['ok', 'ok2'],
    );
  });
}

test('DYNAMIC_DNS as istiod accepts it: wildcard hosts, HTTP/TLS/GRPC/HTTP2 ports, either location; MESH_INTERNAL with a waypoint is refused', () => {
  const valid = [
    `  hosts: ["*.google.com"]\n  ports: [{ number: 80, name: http-valid1, protocol: http }, { number: 8080, name: http-valid2, protocol: http }]\n  resolution: DYNAMIC_DNS`,
    `  hosts: ["*.svc.cluster.local"]\n  addresses: []\n  ports: [{ number: 9090, name: grpc, protocol: GRPC }]\n  resolution: DYNAMIC_DNS`,
    `  hosts: ["*.google.com", "*.amazon.com"]\n${HTTP_PORT}  resolution: DYNAMIC_DNS`,
    `  hosts: ["*.google.com"]\n${HTTP_PORT}  resolution: DYNAMIC_DNS\n  location: MESH_INTERNAL`,
    `  hosts: ["*.google.com"]\n  ports: [{ number: 443, name: tls, protocol: TLS }, { number: 81, name: h2, protocol: HTTP2 }]\n  resolution: DYNAMIC_DNS`,
  ];
  for (const spec of valid) {
    const inputs = loadText(se(spec));
    assert.deepEqual(errors(inputs), [], spec);
    assert.equal(inputs.serviceEntries[0]?.spec.resolution, 'DYNAMIC_DNS');
  }
  const waypoint = (value: string, location: string) =>
    fieldsOf(
      se(`  hosts: ["*.google.com"]\n${HTTP_PORT}  resolution: DYNAMIC_DNS\n  location: ${location}`).replace(
        'namespace: ns1 }',
        `namespace: ns1, labels: { istio.io/use-waypoint: ${value} } }`,
      ),
    );
  assert.deepEqual(waypoint('my-waypoint', 'MESH_INTERNAL'), ['spec.location']);
  assert.deepEqual(waypoint('none', 'MESH_INTERNAL'), []);
  assert.deepEqual(waypoint('my-waypoint', 'MESH_EXTERNAL'), []);
});

test("istiod's warnings: a partial wildcard, TCP without addresses, a selector without labels", () => {
  const warned = (spec: string): string[] =>
    loadText(se(spec))
      .diagnostics.filter((d) => d.severity === 'warning')
      .map((d) => `${d.code} ${d.field}`);
  assert.deepEqual(warned(`  hosts: ["*foo.com"]\n${HTTP_PORT}`), ['partial-wildcard spec.hosts[0]']);
  assert.deepEqual(warned('  hosts: [a.com]\n  ports: [{ number: 9000, name: tcp, protocol: TCP }]'), [
    'tcp-port-without-address spec.ports[0]',
  ]);
  assert.deepEqual(warned(`  hosts: [a.com]\n${HTTP_PORT}  resolution: STATIC\n  workloadSelector: {}`), [
    'empty-selector spec.workloadSelector',
  ]);
});

test('WorkloadEntry: address required unless a network is set; labels merged, metadata wins', () => {
  assert.deepEqual(fieldsOf(we('{ ports: { http: 80 } }')), ['spec.address']);
  assert.deepEqual(fieldsOf(we('{ address: "not a host" }')), ['spec.address']);
  assert.deepEqual(fieldsOf(we('{ address: 1.1.1.1, ports: { http: 0 } }')), ['spec.ports.http']);
  const net = loadText(we('{ network: vm-net }'));
  assert.deepEqual(errors(net), []);
  assert.equal(net.diagnostics.find((d) => d.severity === 'warning')?.code, 'missing-address');
  const merged = loadText(we('{ address: vm.example.com, labels: { app: spec, v: "1" } }', ', labels: { app: meta }'));
  assert.deepEqual(merged.workloadEntries[0]?.spec.labels, { app: 'meta', v: '1' });
  assert.equal(merged.workloadEntries[0]?.healthy, true);
});

test('WorkloadEntry health: only with health checks on does the Healthy condition count (none: unhealthy)', () => {
  const on = ', annotations: { proxy.istio.io/health-checks-enabled: "true" }';
  const status = (s: string) => `\nstatus: { conditions: [{ type: Healthy, status: "${s}" }] }`;
  const healthy = (text: string) => loadText(text).workloadEntries[0]?.healthy;
  assert.equal(healthy(we('{ address: 1.1.1.1 }') + status('False')), true);
  assert.equal(healthy(we('{ address: 1.1.1.1 }', on) + status('True')), true);
  assert.equal(healthy(we('{ address: 1.1.1.1 }', on) + status('False')), false);
  assert.equal(healthy(we('{ address: 1.1.1.1 }', on)), false);
});

test('WorkloadGroup: a template is required; probe counters non-negative, one method', () => {
  const wg = (spec: string) =>
    `apiVersion: networking.istio.io/v1\nkind: WorkloadGroup\nmetadata: { name: g, namespace: ns1 }\nspec: ${spec}`;
  assert.deepEqual(fieldsOf(wg('{ metadata: { labels: { app: a } } }')), ['spec.template']);
  assert.deepEqual(fieldsOf(wg('{ template: {}, probe: { periodSeconds: -1, tcpSocket: { port: 80 } } }')), [
    'spec.probe.periodSeconds',
  ]);
  assert.deepEqual(fieldsOf(wg('{ template: {}, probe: { httpGet: { port: 80, scheme: FTP } } }')), [
    'spec.probe.httpGet.scheme',
  ]);
  const ok = loadText(
    wg('{ metadata: { labels: { app: a } }, template: { serviceAccount: sa }, probe: { exec: { command: [true] } } }'),
  );
  assert.deepEqual(errors(ok), []);
  assert.deepEqual(ok.workloadGroups[0]?.spec, {
    metadata: { labels: { app: 'a' } },
    template: { serviceAccount: 'sa' },
  });
});

test('stored inputs keep what the compiler reads of a WorkloadEntry: the health annotation and Healthy condition', () => {
  const raw = {
    apiVersion: 'networking.istio.io/v1',
    kind: 'WorkloadEntry',
    metadata: {
      name: 'vm',
      namespace: 'ns1',
      uid: 'x',
      annotations: { 'proxy.istio.io/health-checks-enabled': 'true', note: 'not read' },
    },
    spec: { address: '10.0.0.1', serviceAccount: 'sa', unknown: 1 },
    status: {
      conditions: [
        { type: 'Healthy', status: 'True', lastProbeTime: '2026-01-01T00:00:00Z' },
        { type: 'Other', status: 'False' },
      ],
    },
  };
  assert.deepEqual(storedDocument(raw)?.object, {
    apiVersion: 'networking.istio.io/v1',
    kind: 'WorkloadEntry',
    metadata: { name: 'vm', namespace: 'ns1', annotations: { 'proxy.istio.io/health-checks-enabled': 'true' } },
    spec: { address: '10.0.0.1', serviceAccount: 'sa' },
    status: { conditions: [{ type: 'Healthy', status: 'True' }] },
  });
  // Without health checks the status is not read, so not stored.
  const plain = { ...raw, metadata: { name: 'vm', namespace: 'ns1' } };
  assert.equal(storedDocument(plain)?.object.status, undefined);
});

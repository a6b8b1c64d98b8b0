/**
 * PeerAuthentication: scope precedence (facts from istiod's TestComposePeerAuthentication), each
 * mode's inbound chains, port-level overrides, and connections followed through the chains as in
 * istiod's peer_authentication_simulation_test.go (TestPeerAuthenticationPassthrough and
 * TestPeerAuthenticationWithSidecar, the cases without a Sidecar resource).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { indexPeerAuthentications } from '../../../src/compile/security/peer-authn.js';
import type { PeerAuthentication } from '../../../src/model/peer-authentication.js';
import { loadText } from '../../inputs/helpers.js';
import { served } from '../../helpers/mesh.js';
import { simulateInbound, type CallTls, type InboundCall } from './inbound-sim.js';
import { compileYaml, pod, service, sidecarNode, virtualInbound } from './mesh.js';

function pa(name: string, namespace: string, spec: string, created = '2026-01-01T00:00:00Z'): string {
  return `apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: { name: ${JSON.stringify(name)}, namespace: ${namespace}, creationTimestamp: ${JSON.stringify(created)} }
spec: ${spec}`;
}

function policies(...docs: string[]): readonly PeerAuthentication[] {
  const inputs = loadText(docs.join('\n---\n'));
  assert.deepEqual(
    inputs.diagnostics.filter((d) => d.severity === 'error'),
    [],
  );
  return inputs.peerAuthentications;
}

const ROOT = 'root-namespace';
const FOO = { app: 'foo' };
const modeOf = (docs: string[], labels: Record<string, string> = FOO, ns = 'my-ns') =>
  indexPeerAuthentications(policies(...docs), ROOT).forWorkload(ns, labels);

test('precedence: no policy is PERMISSIVE; mesh, namespace, workload narrow it; UNSET inherits', () => {
  assert.equal(modeOf([]).mode, 'PERMISSIVE');
  assert.equal(modeOf([pa('default', ROOT, '{ mtls: { mode: STRICT } }')]).mode, 'STRICT');
  // An empty selector is no selector: still the mesh policy.
  assert.equal(
    modeOf([
      pa('default', ROOT, '{ selector: { matchLabels: {} }, mtls: { mode: STRICT } }'),
      pa('default', 'my-ns', '{ mtls: { mode: PERMISSIVE } }'),
    ]).mode,
    'PERMISSIVE',
  );
  // A selector in the root namespace is ignored.
  assert.equal(
    modeOf([pa('default', ROOT, '{ selector: { matchLabels: { app: foo } }, mtls: { mode: STRICT } }')]).mode,
    'PERMISSIVE',
  );
  assert.equal(
    modeOf([pa('default', 'my-ns', '{}'), pa('foo', 'my-ns', '{ selector: { matchLabels: { app: foo } } }')]).mode,
    'PERMISSIVE',
  );
  assert.equal(
    modeOf([
      pa('default', 'my-ns', '{ mtls: { mode: PERMISSIVE } }'),
      pa('default', ROOT, '{ mtls: { mode: DISABLE } }'),
    ]).mode,
    'PERMISSIVE',
  );
  assert.equal(modeOf([pa('default', ROOT, '{ mtls: { mode: UNSET } }')]).mode, 'PERMISSIVE');
  assert.equal(
    modeOf([
      pa('default', ROOT, '{ mtls: { mode: STRICT } }'),
      pa('foo', 'my-ns', '{ selector: { matchLabels: { app: foo } } }'),
    ]).mode,
    'STRICT',
  );
  assert.equal(
    modeOf([
      pa('default', 'my-ns', '{ mtls: { mode: STRICT } }'),
      pa('foo', 'my-ns', '{ selector: { matchLabels: { app: foo } }, mtls: { mode: UNSET } }'),
    ]).mode,
    'STRICT',
  );
  assert.equal(
    modeOf([
      pa('default', ROOT, '{ mtls: { mode: STRICT } }'),
      pa('default', 'my-ns', '{ mtls: { mode: UNSET } }'),
      pa('foo', 'my-ns', '{ selector: { matchLabels: { app: foo } } }'),
    ]).mode,
    'STRICT',
  );
});

test('precedence: within a scope the oldest policy wins, then the first name', () => {
  const three = (ns: string, selector: string) => [
    pa('now', ns, `{ ${selector} mtls: { mode: DISABLE } }`, '2026-01-01T00:00:01Z'),
    pa('second ago', ns, `{ ${selector} mtls: { mode: PERMISSIVE } }`, '2026-01-01T00:00:00Z'),
    pa('second later', ns, `{ ${selector} mtls: { mode: STRICT } }`, '2026-01-01T00:00:00Z'),
  ];
  // Names with spaces are not valid object names: the index is fed the parsed objects renamed.
  const renamed = (docs: string[]) =>
    docs.map((d) => d.replace(/"second ago"/, 'second-ago').replace(/"second later"/, 'second-later'));
  assert.equal(modeOf(renamed(three(ROOT, ''))).mode, 'PERMISSIVE');
  assert.equal(modeOf(renamed(three('my-ns', ''))).mode, 'PERMISSIVE');
  assert.equal(modeOf(renamed(three('my-ns', 'selector: { matchLabels: { app: foo } },'))).mode, 'PERMISSIVE');
});

test('port level: per target port, UNSET or empty inherits the workload mode', () => {
  const s = modeOf([
    pa('default', ROOT, '{ mtls: { mode: STRICT } }'),
    pa(
      'foo',
      'my-ns',
      "{ selector: { matchLabels: { app: foo } }, portLevelMtls: { '80': { mode: DISABLE }, '90': { mode: UNSET }, '100': {} } }",
    ),
  ]);
  assert.equal(s.mode, 'STRICT');
  assert.deepEqual(
    [...s.perPort],
    [
      [80, 'DISABLE'],
      [90, 'STRICT'],
      [100, 'STRICT'],
    ],
  );
});

test('validation: port-level mTLS needs a selector; ports 1-65535; known modes', () => {
  const errs = (doc: string) =>
    loadText(doc)
      .diagnostics.filter((d) => d.severity === 'error')
      .map((d) => d.field);
  assert.deepEqual(errs(pa('a', 'ns', "{ portLevelMtls: { '80': { mode: STRICT } } }")), ['spec.portLevelMtls']);
  assert.deepEqual(errs(pa('a', 'ns', "{ selector: { matchLabels: { a: b } }, portLevelMtls: { '0': {} } }")), [
    'spec.portLevelMtls.0',
  ]);
  assert.deepEqual(errs(pa('a', 'ns', '{ mtls: { mode: SOMETIMES } }')), ['spec.mtls.mode']);
  assert.deepEqual(errs(pa('a', 'ns', '{ mtls: { mode: STRICT } }')), []);
});

// ---- the inbound chains, followed by simulated connections ----

const FOO_IP = '10.244.0.50';
const FOO_POD = pod('foo', FOO_IP, FOO);
const NODE = sidecarNode('foo', FOO_IP, FOO);
const PA_DEFAULT = (spec: string) => pa('default', 'default', `{ selector: { matchLabels: { app: foo } }, ${spec} }`);

type Expect = InboundCall & { readonly want: string };

const http = (port: number, tls: CallTls, want: string): Expect => ({ port, protocol: 'http', tls, want });
const tcp = (port: number, tls: CallTls, want: string): Expect => ({ port, protocol: 'tcp', tls, want });

function check(docs: string[], calls: readonly Expect[]): void {
  const result = compileYaml(...docs);
  const listener = virtualInbound(result, NODE);
  for (const c of calls) {
    const got = simulateInbound(listener, c);
    const label = `${c.protocol} ${c.tls} on ${c.port}`;
    assert.equal('cluster' in got ? got.cluster : got.error, c.want, label);
  }
}

const PASSTHROUGH = 'InboundPassthroughCluster';
const HTTP_8000 = service('foo', FOO, [{ port: 8000, name: 'http' }]);

const passthroughCases: readonly [string, string[], Expect[]][] = [
  [
    'DISABLE',
    [PA_DEFAULT('mtls: { mode: DISABLE }')],
    [http(8000, 'mtls', PASSTHROUGH), http(8000, 'plaintext', PASSTHROUGH)],
  ],
  [
    'STRICT',
    [PA_DEFAULT('mtls: { mode: STRICT }')],
    [http(8000, 'plaintext', 'no filter chain'), http(8000, 'mtls', PASSTHROUGH)],
  ],
  [
    'PERMISSIVE',
    [PA_DEFAULT('mtls: { mode: PERMISSIVE }')],
    [http(8000, 'plaintext', PASSTHROUGH), http(8000, 'mtls', PASSTHROUGH)],
  ],
  [
    'DISABLE, port 9000 STRICT',
    [PA_DEFAULT("mtls: { mode: DISABLE }, portLevelMtls: { '9000': { mode: STRICT } }")],
    [
      http(8000, 'plaintext', PASSTHROUGH),
      http(8000, 'mtls', PASSTHROUGH),
      http(9000, 'plaintext', 'no filter chain'),
      http(9000, 'mtls', PASSTHROUGH),
    ],
  ],
  [
    'DISABLE, port 9000 STRICT, service on 8000',
    [PA_DEFAULT("mtls: { mode: DISABLE }, portLevelMtls: { '9000': { mode: STRICT } }"), HTTP_8000],
    [
      http(8000, 'plaintext', 'inbound|8000||'),
      // mTLS to a plaintext HTTP port: the HCM cannot decode it.
      http(8000, 'mtls', 'protocol error'),
      http(9000, 'plaintext', 'no filter chain'),
      http(9000, 'mtls', PASSTHROUGH),
    ],
  ],
  [
    'STRICT, port 9000 DISABLE',
    [PA_DEFAULT("mtls: { mode: STRICT }, portLevelMtls: { '9000': { mode: DISABLE } }")],
    [
      http(8000, 'plaintext', 'no filter chain'),
      http(8000, 'mtls', PASSTHROUGH),
      http(9000, 'plaintext', PASSTHROUGH),
      http(9000, 'mtls', PASSTHROUGH),
    ],
  ],
  [
    'STRICT, port 9000 DISABLE, service on 8000',
    [PA_DEFAULT("mtls: { mode: STRICT }, portLevelMtls: { '9000': { mode: DISABLE } }"), HTTP_8000],
    [
      http(8000, 'plaintext', 'no filter chain'),
      http(8000, 'mtls', 'inbound|8000||'),
      http(9000, 'plaintext', PASSTHROUGH),
      http(9000, 'mtls', PASSTHROUGH),
    ],
  ],
  [
    'DISABLE, port 9000 PERMISSIVE',
    [PA_DEFAULT("mtls: { mode: DISABLE }, portLevelMtls: { '9000': { mode: PERMISSIVE } }")],
    [
      http(8000, 'plaintext', PASSTHROUGH),
      http(8000, 'mtls', PASSTHROUGH),
      http(9000, 'plaintext', PASSTHROUGH),
      http(9000, 'mtls', PASSTHROUGH),
    ],
  ],
  [
    'DISABLE, port 9000 PERMISSIVE, service on 8000',
    [PA_DEFAULT("mtls: { mode: DISABLE }, portLevelMtls: { '9000': { mode: PERMISSIVE } }"), HTTP_8000],
    [
      http(8000, 'plaintext', 'inbound|8000||'),
      http(8000, 'mtls', 'protocol error'),
      http(9000, 'plaintext', PASSTHROUGH),
      http(9000, 'mtls', PASSTHROUGH),
    ],
  ],
];

for (const [name, docs, calls] of passthroughCases)
  test(`istiod simulation, passthrough: ${name}`, () => check([FOO_POD, ...docs], calls));

test('istiod simulation, with services: STRICT, port 9090 DISABLE on TCP ports', () => {
  const policy = PA_DEFAULT("mtls: { mode: STRICT }, portLevelMtls: { '9090': { mode: DISABLE } }");
  const tcpPorts = service('se', FOO, [
    { port: 8080, name: 'tcp-tls' },
    { port: 9090, name: 'tcp-plaintext' },
  ]);
  check(
    [FOO_POD, policy, tcpPorts],
    [
      tcp(8080, 'plaintext', 'no filter chain'),
      tcp(8080, 'mtls', 'inbound|8080||'),
      tcp(9090, 'plaintext', 'inbound|9090||'),
      // No chain on 9090 wants TLS, so the TLS inspector is off there: the bytes are just TCP.
      tcp(9090, 'mtls', 'inbound|9090||'),
    ],
  );
  // No service declares the ports: the passthrough, per port.
  check(
    [FOO_POD, policy, service('se', FOO, [{ port: 5050, name: 'tcp-random' }])],
    [
      tcp(8080, 'plaintext', 'no filter chain'),
      tcp(8080, 'mtls', PASSTHROUGH),
      tcp(9090, 'plaintext', PASSTHROUGH),
      tcp(9090, 'mtls', PASSTHROUGH),
    ],
  );
});

test('each mode: the chains of an HTTP and a TCP port, and of the passthrough (protocol sniffed)', () => {
  const svc = service('foo', FOO, [
    { port: 8000, name: 'http' },
    { port: 8100, name: 'tcp' },
  ]);
  const shape = (mode: string) => {
    const listener = virtualInbound(compileYaml(FOO_POD, svc, PA_DEFAULT(`mtls: { mode: ${mode} }`)), NODE);
    return (listener.filter_chains as Record<string, unknown>[]).map((c) => {
      const m = (c.filter_chain_match ?? {}) as Record<string, unknown>;
      return [
        c.name,
        m.destination_port ?? '-',
        m.transport_protocol ?? '-',
        ((m.application_protocols as string[] | undefined) ?? []).join(' ') || '-',
        c.transport_socket ? 'mtls' : '-',
      ].join(' ');
    });
  };
  assert.deepEqual(shape('STRICT'), [
    'virtualInbound-blackhole 15006 - - -',
    'virtualInbound-catchall-http - tls istio-http/1.0 istio-http/1.1 istio-h2 mtls',
    'virtualInbound - tls - mtls',
    '0.0.0.0_8000 8000 tls - mtls',
    '0.0.0.0_8100 8100 tls - mtls',
  ]);
  assert.deepEqual(shape('DISABLE'), [
    'virtualInbound-blackhole 15006 - - -',
    'virtualInbound-catchall-http - raw_buffer http/1.1 h2c -',
    'virtualInbound - raw_buffer - -',
    '0.0.0.0_8000 8000 raw_buffer - -',
    '0.0.0.0_8100 8100 raw_buffer - -',
  ]);
  assert.deepEqual(shape('PERMISSIVE'), [
    'virtualInbound-blackhole 15006 - - -',
    'virtualInbound-catchall-http - tls istio-http/1.0 istio-http/1.1 istio-h2 mtls',
    'virtualInbound-catchall-http - raw_buffer http/1.1 h2c -',
    'virtualInbound - tls istio-peer-exchange istio mtls',
    'virtualInbound - raw_buffer - -',
    'virtualInbound - tls - -',
    '0.0.0.0_8000 8000 tls istio istio-peer-exchange istio-http/1.0 istio-http/1.1 istio-h2 mtls',
    '0.0.0.0_8000 8000 raw_buffer - -',
    '0.0.0.0_8100 8100 tls istio istio-peer-exchange istio-http/1.0 istio-http/1.1 istio-h2 mtls',
    '0.0.0.0_8100 8100 tls - -',
    '0.0.0.0_8100 8100 raw_buffer - -',
  ]);
  // DISABLE: nothing wants TLS, so no TLS inspector at all.
  const disabled = virtualInbound(compileYaml(FOO_POD, svc, PA_DEFAULT('mtls: { mode: DISABLE }')), NODE);
  assert.deepEqual(
    (disabled.listener_filters as { name: string }[]).map((f) => f.name),
    ['envoy.filters.listener.original_dst', 'envoy.filters.listener.http_inspector'],
  );
});

test('a workload policy keys the class; other pods of the namespace keep the namespace mode', () => {
  const bar = pod('bar', '10.244.0.51', { app: 'bar' });
  const result = compileYaml(
    FOO_POD,
    bar,
    pa('ns', 'default', '{ mtls: { mode: STRICT } }'),
    PA_DEFAULT('mtls: { mode: DISABLE }'),
  );
  assert.equal(served(result, NODE).classId, 'sidecar/default/_/peer:default/default');
  const barNode = sidecarNode('bar', '10.244.0.51', { app: 'bar' });
  assert.equal(served(result, barNode).classId, 'sidecar/default/_');
  const fooCall = simulateInbound(virtualInbound(result, NODE), http(7000, 'plaintext', ''));
  assert.equal('cluster' in fooCall && fooCall.cluster, PASSTHROUGH);
  assert.deepEqual(simulateInbound(virtualInbound(result, barNode), http(7000, 'plaintext', '')), {
    error: 'no filter chain',
  });
  assert.deepEqual(result.diagnostics, []);
});

test('client side: auto mTLS is off towards a namespace whose PeerAuthentication is DISABLE, on for STRICT', () => {
  const other = pod('baz', '10.244.1.5', { app: 'baz' }, 'other');
  const svc = service('baz', { app: 'baz' }, [{ port: 80, name: 'http' }], 'other');
  const slice = `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: baz-1, namespace: other, labels: { kubernetes.io/service-name: baz } }
addressType: IPv4
ports: [{ name: http, port: 80, protocol: TCP }]
endpoints: [{ addresses: [10.244.1.5], conditions: { ready: true }, targetRef: { kind: Pod, name: baz, namespace: other } }]`;
  const cluster = (mode: string) =>
    served(
      compileYaml(FOO_POD, other, svc, slice, pa('default', 'other', `{ mtls: { mode: ${mode} } }`)),
      NODE,
    ).resources.clusters.get('outbound|80||baz.other.svc.cluster.local');
  assert.equal(cluster('DISABLE')?.transport_socket_matches, undefined);
  assert.ok(cluster('STRICT')?.transport_socket_matches);
  assert.ok(cluster('PERMISSIVE')?.transport_socket_matches);
});

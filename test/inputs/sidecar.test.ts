/**
 * Sidecar validation: cases of istiod's TestValidateSidecar (pkg/config/validation), as facts
 * about meshsnap's reader (valid or not, and whether it warns).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadText } from './helpers.js';

function sidecar(spec: string, namespace = 'bar'): string {
  return `apiVersion: networking.istio.io/v1
kind: Sidecar
metadata:
  name: s
  namespace: ${namespace}
spec:
${spec
  .trim()
  .split('\n')
  .map((l) => `  ${l}`)
  .join('\n')}
`;
}

const cases: { name: string; spec: string; valid: boolean; warning?: boolean }[] = [
  { name: 'default', spec: 'egress: [{hosts: ["*/*"]}]', valid: true },
  {
    name: 'workload selector without labels',
    spec: 'egress: [{hosts: ["*/*"]}]\nworkloadSelector: {}',
    valid: true,
    warning: true,
  },
  { name: 'import local namespace with wildcard', spec: 'egress: [{hosts: ["./*"]}]', valid: true },
  { name: 'import local namespace with fqdn', spec: 'egress: [{hosts: ["./foo.com"]}]', valid: true },
  { name: 'import nothing', spec: 'egress: [{hosts: ["~/*"]}]', valid: true },
  { name: 'import all except a namespace', spec: 'egress: [{hosts: ["*/*", "~ns1/*"]}]', valid: true },
  { name: 'import all except an exact host', spec: 'egress: [{hosts: ["*/*", "~/foo.com"]}]', valid: true },
  { name: 'exclude with invalid namespace', spec: 'egress: [{hosts: ["*/*", "~Invalid_NS/*"]}]', valid: false },
  { name: 'bad egress host 1', spec: 'egress: [{hosts: ["*"]}]', valid: false },
  { name: 'bad egress host 2', spec: 'egress: [{hosts: ["/"]}]', valid: false },
  { name: 'empty egress host', spec: 'egress: [{hosts: []}]', valid: false },
  {
    name: 'multiple wildcard egress',
    spec: 'egress: [{hosts: ["*/foo.com"]}, {hosts: ["ns1/bar.com"]}]',
    valid: false,
  },
  {
    name: 'wildcard egress not in end',
    spec: 'egress: [{hosts: ["*/foo.com"]}, {port: {protocol: http, number: 8080, name: h8080}, hosts: ["ns1/bar.com"]}]',
    valid: false,
  },
  {
    name: 'invalid Port',
    spec: 'egress: [{port: {protocol: http1, number: 1000000}, hosts: ["ns1/bar.com"]}]',
    valid: false,
  },
  {
    name: 'Port without name',
    spec: 'egress: [{port: {protocol: http, number: 8080}, hosts: ["ns1/bar.com"]}]',
    valid: true,
  },
  {
    name: 'UDS bind in outbound',
    spec: 'egress: [{port: {protocol: http, number: 0, name: uds}, hosts: ["ns1/bar.com"], bind: "unix:///@foo/bar/com"}]',
    valid: true,
  },
  {
    name: 'UDS bind to an abstract socket',
    spec: 'egress: [{port: {protocol: http, number: 0, name: uds}, hosts: ["ns1/bar.com"], bind: "unix://@foo"}]',
    valid: true,
  },
  {
    name: 'UDS bind to a relative path (ValidateUnixAddress)',
    spec: 'egress: [{port: {protocol: http, number: 0, name: uds}, hosts: ["ns1/bar.com"], bind: "unix://foo/bar"}]',
    valid: false,
  },
  {
    name: 'UDS bind to a directory (ValidateUnixAddress)',
    spec: 'egress: [{port: {protocol: http, number: 0, name: uds}, hosts: ["ns1/bar.com"], bind: "unix:///var/run/"}]',
    valid: false,
  },
  {
    name: 'UDS bind without a path',
    spec: 'egress: [{port: {protocol: http, number: 0, name: uds}, hosts: ["ns1/bar.com"], bind: "unix://"}]',
    valid: false,
  },
  {
    name: 'UDS bind in inbound',
    spec: 'ingress: [{port: {protocol: http, number: 0, name: uds}, bind: "unix:///@foo/bar/com", defaultEndpoint: "127.0.0.1:9999"}]',
    valid: false,
  },
  {
    name: 'invalid bind',
    spec: 'egress: [{port: {protocol: http, number: 0, name: uds}, hosts: ["ns1/bar.com"], bind: "foobar:///@foo/bar/com"}]',
    valid: false,
  },
  {
    name: 'invalid capture mode with uds bind',
    spec: 'egress: [{port: {protocol: http, number: 0, name: uds}, hosts: ["ns1/bar.com"], bind: "unix:///@foo/bar/com", captureMode: IPTABLES}]',
    valid: false,
  },
  {
    name: 'duplicate UDS bind',
    spec: `egress:
- {port: {protocol: http, number: 0, name: uds}, hosts: ["ns1/bar.com"], bind: "unix:///@foo/bar/com"}
- {port: {protocol: http, number: 0, name: uds}, hosts: ["ns1/bar.com"], bind: "unix:///@foo/bar/com"}`,
    valid: false,
  },
  {
    name: 'duplicate ports',
    spec: `egress:
- {port: {protocol: http, number: 90, name: foo}, hosts: ["ns1/bar.com"]}
- {port: {protocol: tcp, number: 90, name: tcp}, hosts: ["ns2/bar.com"]}`,
    valid: false,
  },
  {
    name: 'ingress without port',
    spec: 'ingress: [{defaultEndpoint: "127.0.0.1:110"}]\negress: [{hosts: ["*/*"]}]',
    valid: false,
  },
  {
    name: 'ingress with duplicate ports',
    spec: `ingress:
- {port: {protocol: http, number: 90, name: foo}, defaultEndpoint: "127.0.0.1:110"}
- {port: {protocol: tcp, number: 90, name: bar}, defaultEndpoint: "127.0.0.1:110"}`,
    valid: false,
  },
  {
    name: 'ingress without default endpoint',
    spec: 'ingress: [{port: {protocol: http, number: 90, name: foo}}]\negress: [{hosts: ["*/*"]}]',
    valid: true,
  },
  {
    name: 'ingress with invalid default endpoint in IPv4',
    spec: 'ingress: [{port: {protocol: http, number: 90, name: foo}, defaultEndpoint: "1.1.1.1:90"}]',
    valid: false,
  },
  {
    name: 'ingress with invalid default endpoint in IPv6',
    spec: 'ingress: [{port: {protocol: http, number: 90, name: foo}, defaultEndpoint: "[1:1:1:1:1:1:1:1]:90"}]',
    valid: false,
  },
  {
    name: 'ingress with invalid default endpoint uds',
    spec: 'ingress: [{port: {protocol: http, number: 90, name: foo}, defaultEndpoint: "unix://"}]',
    valid: false,
  },
  {
    name: 'ingress with invalid default endpoint port',
    spec: 'ingress: [{port: {protocol: http, number: 90, name: foo}, defaultEndpoint: "127.0.0.1:hi"}]',
    valid: false,
  },
  {
    name: 'valid ingress and egress in IPv6',
    spec: 'ingress: [{port: {protocol: http, number: 90, name: foo}, defaultEndpoint: "[::1]:9999"}]\negress: [{hosts: ["*/*"]}]',
    valid: true,
  },
  { name: 'empty', spec: '{}', valid: false },
  { name: 'just outbound traffic policy', spec: 'outboundTrafficPolicy: {mode: ALLOW_ANY}', valid: true },
  {
    name: 'empty protocol',
    spec: 'ingress: [{port: {number: 90, name: foo}, defaultEndpoint: "127.0.0.1:9999"}]',
    valid: true,
  },
  {
    name: 'sidecar egress proxy with REGISTRY_ONLY (default)',
    spec: 'outboundTrafficPolicy: {egressProxy: {host: foo.bar, subset: shiny, port: {number: 5000}}}\negress: [{hosts: ["*/*"]}]',
    valid: false,
  },
  {
    name: 'sidecar egress proxy with ALLOW_ANY',
    spec: 'outboundTrafficPolicy: {mode: ALLOW_ANY, egressProxy: {host: foo.bar, subset: shiny, port: {number: 5000}}}\negress: [{hosts: ["*/*"]}]',
    valid: true,
  },
  {
    name: 'sidecar egress proxy with ALLOW_ANY, invalid fqdn',
    spec: 'outboundTrafficPolicy: {mode: ALLOW_ANY, egressProxy: {host: "foobar*123", port: {number: 5000}}}',
    valid: false,
  },
  {
    name: 'sidecar egress proxy (without port) with ALLOW_ANY',
    spec: 'outboundTrafficPolicy: {mode: ALLOW_ANY, egressProxy: {host: foo.bar, subset: shiny}}',
    valid: false,
  },
  {
    name: 'ALLOW_ANY_DYNAMIC_DNS rejected in sidecar',
    spec: 'outboundTrafficPolicy: {mode: ALLOW_ANY_DYNAMIC_DNS}',
    valid: false,
  },
  {
    name: 'sidecar egress only one wildcarded',
    spec: 'egress: [{hosts: ["*/*", "test/a.com"]}]',
    valid: true,
    warning: true,
  },
  { name: 'sidecar egress wildcarded ns', spec: 'egress: [{hosts: ["*/b.com", "test/a.com"]}]', valid: true },
  {
    name: 'sidecar egress duplicated with wildcarded same namespace',
    spec: 'egress: [{hosts: ["test/*", "test/a.com"]}]',
    valid: true,
    warning: true,
  },
  { name: 'invalid partial wildcard', spec: 'egress: [{hosts: ["test/*a.com"]}]', valid: false },
  {
    name: 'sidecar egress duplicated with wildcarded same namespace .',
    spec: 'egress: [{hosts: ["./*", "bar/a.com"]}]',
    valid: true,
    warning: true,
  },
  {
    name: 'ingress tls mode set to ISTIO_MUTUAL',
    spec: 'ingress: [{port: {protocol: https, number: 90, name: foo}, defaultEndpoint: "127.0.0.1:9999", tls: {mode: ISTIO_MUTUAL}}]',
    valid: false,
  },
  {
    name: 'ingress tls invalid protocol',
    spec: 'ingress: [{port: {protocol: tcp, number: 90, name: foo}, defaultEndpoint: "127.0.0.1:9999", tls: {mode: SIMPLE, serverCertificate: /a, privateKey: /b}}]',
    valid: false,
  },
  {
    name: 'ingress tls httpsRedirect is not supported',
    spec: 'ingress: [{port: {protocol: https, number: 90, name: foo}, defaultEndpoint: "127.0.0.1:9999", tls: {mode: SIMPLE, httpsRedirect: true, serverCertificate: /a, privateKey: /b}}]',
    valid: false,
  },
  {
    name: 'ingress tls credentialName is not supported',
    spec: 'ingress: [{port: {protocol: https, number: 90, name: foo}, defaultEndpoint: "127.0.0.1:9999", tls: {mode: SIMPLE, credentialName: secret}}]',
    valid: false,
  },
];

for (const c of cases) {
  test(`Sidecar validation (istiod TestValidateSidecar): ${c.name}`, () => {
    const inputs = loadText(sidecar(c.spec));
    const errors = inputs.diagnostics.filter((d) => d.severity === 'error');
    assert.equal(inputs.sidecars.length === 1, c.valid, JSON.stringify(errors));
    assert.equal(errors.length === 0, c.valid, JSON.stringify(inputs.diagnostics));
    const warned = inputs.diagnostics.some(
      (d) => d.severity === 'warning' && d.code !== 'ignored-field' && d.kind === 'Sidecar',
    );
    if (c.valid) assert.equal(warned, c.warning ?? false, JSON.stringify(inputs.diagnostics));
  });
}

test('Sidecar: v1, v1beta1 and v1alpha3 are read alike; the oldest creationTimestamp is kept', () => {
  const text = ['v1', 'v1beta1', 'v1alpha3']
    .map(
      (v, i) => `apiVersion: networking.istio.io/${v}
kind: Sidecar
metadata: {name: s${i}, namespace: shop, creationTimestamp: "2024-01-0${i + 1}T00:00:00Z"}
spec: {egress: [{hosts: ["./*"]}]}`,
    )
    .join('\n---\n');
  const inputs = loadText(text);
  assert.deepEqual(
    inputs.sidecars.map((s) => [s.apiVersion, s.meta.name, s.creationTimestamp]),
    [
      ['networking.istio.io/v1', 's0', '2024-01-01T00:00:00Z'],
      ['networking.istio.io/v1beta1', 's1', '2024-01-02T00:00:00Z'],
      ['networking.istio.io/v1alpha3', 's2', '2024-01-03T00:00:00Z'],
    ],
  );
  assert.deepEqual(inputs.diagnostics, []);
});

test('exportTo validation (istiod validateExportTo): duplicates, `~` outside ServiceEntries, `*` with others, bad names', () => {
  const vs = (exportTo: string) => `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: v, namespace: shop}
spec: {hosts: [cart], exportTo: ${exportTo}, http: [{route: [{destination: {host: cart}}]}]}`;
  for (const [exportTo, ok] of [
    ['["."]', true],
    ['["*"]', true],
    ['[".", "payments"]', true],
    ['[".", "shop"]', false],
    ['["~"]', false],
    ['["*", "payments"]', false],
    ['["Not_A_Namespace"]', false],
  ] as const) {
    const inputs = loadText(vs(exportTo));
    assert.equal(inputs.virtualServices.length === 1, ok, `${exportTo}: ${JSON.stringify(inputs.diagnostics)}`);
  }
});

test('mesh config: defaultServiceExportTo, defaultVirtualServiceExportTo, defaultDestinationRuleExportTo are read', () => {
  const inputs = loadText(`apiVersion: meshsnap.dev/v1alpha1
kind: MeshConfig
spec:
  defaultServiceExportTo: ["."]
  defaultVirtualServiceExportTo: ["*"]
  defaultDestinationRuleExportTo: [".", "istio-system"]`);
  assert.deepEqual(inputs.meshConfig.defaultServiceExportTo, ['.']);
  assert.deepEqual(inputs.meshConfig.defaultVirtualServiceExportTo, ['*']);
  assert.deepEqual(inputs.meshConfig.defaultDestinationRuleExportTo, ['.', 'istio-system']);
});

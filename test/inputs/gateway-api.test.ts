/** The Gateway API validators: defaults the spec fills in, and the schema and CEL rules that refuse an object. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildInputSet } from '../../src/inputs/load.js';
import { parseDocuments } from '../../src/inputs/parse.js';
import { retainedForStorage } from '../../src/inputs/retain.js';
import type { InputSet } from '../../src/model/inputs.js';

const GW = 'gateway.networking.k8s.io/v1';

function load(objects: readonly unknown[]): InputSet {
  return buildInputSet(
    parseDocuments(JSON.stringify({ kind: 'List', apiVersion: 'v1', items: objects }), 'gw.json').docs,
  );
}

const errors = (set: InputSet) => set.diagnostics.filter((d) => d.severity === 'error');

const gateway = (listeners: unknown[], name = 'gw') => ({
  apiVersion: GW,
  kind: 'Gateway',
  metadata: { name, namespace: 'infra', generation: 3, creationTimestamp: '2026-01-01T00:00:00Z' },
  spec: { gatewayClassName: 'istio', listeners },
});

const route = (spec: unknown, kind = 'HTTPRoute', apiVersion = GW) => ({
  apiVersion,
  kind,
  metadata: { name: 'r', namespace: 'default' },
  spec,
});

test('an Istio Gateway and a Gateway API Gateway of the same name are both read, each as its own kind', () => {
  const set = load([
    gateway([{ name: 'http', port: 80, protocol: 'HTTP' }], 'same'),
    {
      apiVersion: 'networking.istio.io/v1',
      kind: 'Gateway',
      metadata: { name: 'same', namespace: 'infra' },
      spec: { servers: [{ port: { number: 80, name: 'http', protocol: 'HTTP' }, hosts: ['*'] }] },
    },
  ]);
  assert.deepEqual(errors(set), []);
  assert.equal(set.gateways.length, 1);
  assert.equal(set.kubernetesGateways.length, 1);
  assert.equal(set.kubernetesGateways[0]?.kind, 'KubernetesGateway');
});

test('defaults: allowedRoutes from Same, TLS mode Terminate, parentRef group/kind Gateway, backendRef kind Service weight 1, path PathPrefix /', () => {
  const set = load([
    gateway([
      { name: 'http', port: 80, protocol: 'HTTP' },
      { name: 'https', port: 443, protocol: 'HTTPS', tls: { certificateRefs: [{ name: 'cert' }] } },
    ]),
    route({ parentRefs: [{ name: 'gw', namespace: 'infra' }], rules: [{ backendRefs: [{ name: 'svc', port: 80 }] }] }),
  ]);
  assert.deepEqual(errors(set), []);
  const gw = set.kubernetesGateways[0];
  assert.deepEqual(gw?.meta.generation, 3);
  assert.deepEqual(gw?.meta.creationTimestamp, '2026-01-01T00:00:00Z');
  assert.deepEqual(gw?.spec.listeners[0]?.allowedRoutes, { namespaces: { from: 'Same' } });
  assert.deepEqual(gw?.spec.listeners[1]?.tls, {
    mode: 'Terminate',
    certificateRefs: [{ group: '', kind: 'Secret', name: 'cert' }],
    options: {},
  });
  const r = set.httpRoutes[0];
  assert.deepEqual(r?.spec.parentRefs, [
    { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw', namespace: 'infra' },
  ]);
  assert.deepEqual(r?.spec.rules[0]?.matches, [
    { path: { type: 'PathPrefix', value: '/' }, headers: [], queryParams: [] },
  ]);
  assert.deepEqual(r?.spec.rules[0]?.backendRefs, [
    { group: '', kind: 'Service', name: 'svc', port: 80, weight: 1, filters: [] },
  ]);
});

test('an HTTPRoute without rules gets the spec default rule (match everything, no backends)', () => {
  const set = load([route({ parentRefs: [{ name: 'gw' }] })]);
  assert.deepEqual(set.httpRoutes[0]?.spec.rules, [
    {
      matches: [{ path: { type: 'PathPrefix', value: '/' }, headers: [], queryParams: [] }],
      filters: [],
      backendRefs: [],
    },
  ]);
});

const refused: readonly [string, unknown, string][] = [
  [
    'a TLS listener without tls',
    gateway([{ name: 'tls', port: 443, protocol: 'TLS' }]),
    'tls mode must be set for protocol TLS',
  ],
  [
    'tls on an HTTP listener',
    gateway([{ name: 'h', port: 80, protocol: 'HTTP', tls: { certificateRefs: [{ name: 'c' }] } }]),
    "tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']",
  ],
  [
    'hostname on a TCP listener',
    gateway([{ name: 't', port: 9000, protocol: 'TCP', hostname: 'a.example' }]),
    "hostname must not be specified for protocols ['TCP', 'UDP']",
  ],
  [
    'duplicate listener names',
    gateway([
      { name: 'a', port: 80, protocol: 'HTTP' },
      { name: 'a', port: 81, protocol: 'HTTP' },
    ]),
    'Listener name must be unique within the Gateway',
  ],
  [
    'same port, protocol and hostname twice',
    gateway([
      { name: 'a', port: 80, protocol: 'HTTP' },
      { name: 'b', port: 80, protocol: 'HTTP' },
    ]),
    'Combination of port, protocol and hostname must be unique for each listener',
  ],
  [
    'Terminate without certificates or options',
    gateway([{ name: 's', port: 443, protocol: 'HTTPS', tls: { mode: 'Terminate' } }]),
    'certificateRefs or options must be specified when mode is Terminate',
  ],
  [
    'an IP as listener hostname',
    gateway([{ name: 'a', port: 80, protocol: 'HTTP', hostname: '10.0.0.1' }]),
    'is an IP address',
  ],
  [
    'a relative path prefix',
    route({ rules: [{ matches: [{ path: { type: 'PathPrefix', value: 'foo' } }] }] }),
    "value must be an absolute path and start with '/'",
  ],
  [
    'a path with //',
    route({ rules: [{ matches: [{ path: { type: 'Exact', value: '/a//b' } }] }] }),
    "must not contain '//'",
  ],
  [
    'a regex RE2 refuses',
    route({ rules: [{ matches: [{ path: { type: 'RegularExpression', value: '(?=x)' } }] }] }),
    'not supported by Envoy (RE2)',
  ],
  [
    'redirect with backendRefs',
    route({
      rules: [
        {
          filters: [{ type: 'RequestRedirect', requestRedirect: { scheme: 'https' } }],
          backendRefs: [{ name: 's', port: 80 }],
        },
      ],
    }),
    'RequestRedirect filter must not be used together with backendRefs',
  ],
  [
    'redirect and rewrite together',
    route({
      rules: [
        {
          filters: [
            { type: 'RequestRedirect', requestRedirect: {} },
            { type: 'URLRewrite', urlRewrite: {} },
          ],
        },
      ],
    }),
    'but not both',
  ],
  [
    'a filter whose member does not match its type',
    route({ rules: [{ filters: [{ type: 'URLRewrite', requestRedirect: {} }] }] }),
    'filter.requestRedirect must be nil if the filter.type is not RequestRedirect',
  ],
  [
    'ReplacePrefixMatch without a PathPrefix match',
    route({
      rules: [
        {
          matches: [{ path: { type: 'Exact', value: '/a' } }],
          filters: [
            { type: 'URLRewrite', urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/b' } } },
          ],
        },
      ],
    }),
    'exactly one PathPrefix match must be specified',
  ],
  [
    'a redirect status the spec does not list',
    route({ rules: [{ filters: [{ type: 'RequestRedirect', requestRedirect: { statusCode: 305 } }] }] }),
    'must be 301, 302, 303, 307 or 308',
  ],
  [
    'a Service backendRef without port',
    route({ rules: [{ backendRefs: [{ name: 's' }] }] }),
    'must be specified when the referent is a Kubernetes Service',
  ],
  [
    'a weight over 1000000',
    route({ rules: [{ backendRefs: [{ name: 's', port: 80, weight: 1000001 }] }] }),
    'must be between 0 and 1000000',
  ],
  [
    'backendRequest longer than request',
    route({ rules: [{ timeouts: { request: '1s', backendRequest: '2s' } }] }),
    'backendRequest timeout cannot be longer than request timeout',
  ],
  [
    'a GRPCRoute method match with neither service nor method',
    route({ rules: [{ matches: [{ method: { type: 'Exact' } }] }] }, 'GRPCRoute'),
    'One or both of service or method must be specified',
  ],
  [
    'a TCPRoute rule without backends',
    route({ rules: [{}] }, 'TCPRoute', 'gateway.networking.k8s.io/v1alpha2'),
    'must have at least one backendRef',
  ],
];

for (const [what, object, message] of refused) {
  test(`refused: ${what}`, () => {
    const set = load([object]);
    const errs = errors(set);
    assert.ok(
      errs.some((d) => d.message.includes(message)),
      `expected an error containing ${JSON.stringify(message)}, got ${JSON.stringify(errs.map((d) => d.message))}`,
    );
    assert.equal(
      set.kubernetesGateways.length + set.httpRoutes.length + set.grpcRoutes.length + set.tcpRoutes.length,
      0,
    );
  });
}

test('TCPRoute and TLSRoute are read in v1alpha2 and v1; another version is an unknown apiVersion', () => {
  const rules = { rules: [{ backendRefs: [{ name: 's', port: 9000 }] }] };
  assert.equal(load([route(rules, 'TCPRoute', GW)]).tcpRoutes.length, 1);
  assert.equal(load([route(rules, 'TLSRoute', 'gateway.networking.k8s.io/v1alpha2')]).tlsRoutes.length, 1);
  const set = load([route(rules, 'TCPRoute', 'gateway.networking.k8s.io/v1beta1')]);
  assert.equal(errors(set)[0]?.code, 'unknown-api-version');
});

test('stored inputs keep what the compiler reads of a Gateway API object, generation and creation time included', () => {
  const kept = retainedForStorage(gateway([{ name: 'http', port: 80, protocol: 'HTTP' }]) as Record<string, unknown>);
  const meta = (kept as { metadata: Record<string, unknown> }).metadata;
  assert.equal(meta.generation, 3);
  assert.equal(meta.creationTimestamp, '2026-01-01T00:00:00Z');
});

test('Gateway fields meshsnap does not apply (spec.tls.backend, infrastructure) are warned about, not silently dropped', () => {
  const gw = gateway([{ name: 'http', port: 80, protocol: 'HTTP' }]);
  const set = load([
    {
      ...gw,
      spec: {
        ...gw.spec,
        tls: { backend: { clientCertificateRef: { name: 'c' } } },
        infrastructure: { labels: { a: 'b' } },
      },
    },
  ]);
  assert.equal(set.kubernetesGateways.length, 1);
  assert.deepEqual(
    set.diagnostics.filter((d) => d.code === 'unsupported-field').map((d) => d.field),
    ['spec.infrastructure', 'spec.tls.backend'],
  );
  // spec.tls.frontend is applied (test/compile/gateway-api/frontend-validation.test.ts); its default is required.
  const noDefault = load([{ ...gw, spec: { ...gw.spec, tls: { frontend: {} } } }]);
  assert.equal(noDefault.kubernetesGateways.length, 0);
});

const warnings = (set: InputSet, code: string) =>
  set.diagnostics
    .filter((d) => d.severity === 'warning' && d.code === code)
    .map((d) => d.field)
    .sort();

test('GatewayClass parametersRef: read with its field list (group, kind, name required) and reported as not applied, as istiod ignores it', () => {
  const cls = (parametersRef: unknown) => ({
    apiVersion: GW,
    kind: 'GatewayClass',
    metadata: { name: 'istio' },
    spec: { controllerName: 'istio.io/gateway-controller', parametersRef },
  });
  const ok = load([cls({ group: '', kind: 'ConfigMap', name: 'defaults', namespace: 'istio-system' })]);
  assert.equal(ok.gatewayClasses.length, 1);
  assert.deepEqual(warnings(ok, 'unsupported-field'), ['spec.parametersRef']);
  const odd = load([cls({ group: '', kind: 'ConfigMap', name: 'defaults', extra: 1 })]);
  assert.deepEqual(warnings(odd, 'unknown-field'), ['spec.parametersRef.extra']);
  const bad = load([cls({ group: '', kind: 'ConfigMap' })]);
  assert.deepEqual(
    errors(bad).map((d) => d.field),
    ['spec.parametersRef.name'],
  );
  assert.equal(bad.gatewayClasses.length, 0);
});

test('listener TLS: frontendValidation and options istiod does not read are warned about; the cipher suites option is filtered as istiod', () => {
  const listener = (tls: unknown) => gateway([{ name: 'https', port: 443, protocol: 'HTTPS', tls }]);
  const set = load([
    listener({
      certificateRefs: [{ name: 'cert' }],
      frontendValidation: { caCertificateRefs: [{ kind: 'ConfigMap', name: 'ca', group: '' }] },
      options: {
        'gateway.istio.io/tls-terminate-mode': 'SIMPLE',
        'gateway.istio.io/tls-cipher-suites': 'ECDHE-RSA-AES128-GCM-SHA256, BOGUS,,ECDHE-RSA-AES128-GCM-SHA256',
        'example.com/other': 'x',
      },
    }),
  ]);
  assert.deepEqual(errors(set), []);
  assert.deepEqual(set.kubernetesGateways[0]?.spec.listeners[0]?.tls?.cipherSuites, ['ECDHE-RSA-AES128-GCM-SHA256']);
  assert.deepEqual(warnings(set, 'unsupported-field'), ['spec.listeners[0].tls.frontendValidation']);
  assert.deepEqual(warnings(set, 'ignored-field'), [
    'spec.listeners[0].tls.options.example.com/other',
    'spec.listeners[0].tls.options.gateway.istio.io/tls-terminate-mode',
  ]);
  assert.deepEqual(warnings(set, 'invalid-cipher-suite'), [
    'spec.listeners[0].tls.options.gateway.istio.io/tls-cipher-suites',
    'spec.listeners[0].tls.options.gateway.istio.io/tls-cipher-suites',
  ]);

  const builtin = load([
    listener({
      options: {
        'gateway.istio.io/tls-terminate-mode': 'ISTIO_MUTUAL',
        'gateway.istio.io/tls-cipher-suites': 'ECDHE-RSA-AES128-GCM-SHA256',
      },
    }),
  ]);
  assert.equal(builtin.kubernetesGateways[0]?.spec.listeners[0]?.tls?.cipherSuites, undefined);
  assert.deepEqual(warnings(builtin, 'ignored-field'), [
    'spec.listeners[0].tls.options.gateway.istio.io/tls-cipher-suites',
  ]);
  const passthrough = load([
    gateway([
      {
        name: 'tls',
        port: 443,
        protocol: 'TLS',
        tls: { mode: 'Passthrough', options: { 'gateway.istio.io/tls-terminate-mode': 'MUTUAL' } },
      },
    ]),
  ]);
  assert.deepEqual(warnings(passthrough, 'ignored-field'), [
    'spec.listeners[0].tls.options.gateway.istio.io/tls-terminate-mode',
  ]);
});

test('route fields istiod does not implement (useDefaultGateways, rules[].sessionPersistence) and a zero retry backoff are warned about', () => {
  const backendRefs = [{ name: 'a', port: 80 }];
  const http = load([
    route({
      useDefaultGateways: 'All',
      parentRefs: [{ name: 'gw' }],
      rules: [
        {
          backendRefs,
          sessionPersistence: { sessionName: 's', type: 'Cookie' },
          retry: { attempts: 1, backoff: '0s' },
        },
      ],
    }),
  ]);
  assert.deepEqual(errors(http), []);
  assert.equal(http.httpRoutes.length, 1);
  assert.deepEqual(warnings(http, 'unsupported-field'), [
    'spec.rules[0].sessionPersistence',
    'spec.useDefaultGateways',
  ]);
  assert.deepEqual(warnings(http, 'ignored-field'), ['spec.rules[0].retry.backoff']);
  const grpc = load([
    route(
      { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs, sessionPersistence: { type: 'Header' } }] },
      'GRPCRoute',
    ),
  ]);
  assert.deepEqual(warnings(grpc, 'unsupported-field'), ['spec.rules[0].sessionPersistence']);
});

/**
 * Kubernetes Ingress and IngressClass (networking.k8s.io/v1) and the MeshConfig ingress fields:
 * read with the API server's rules, diagnostics naming file, kind, namespace/name and field; only
 * what the conversion reads is kept, and stored.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { retainedForStorage } from '../../src/inputs/retain.js';
import { canonicalObject } from '../../src/snapshot/stored-inputs/canonical-object.js';
import { errors, loadText, onlyError } from './helpers.js';

const ingress = (spec: string, meta = '') => `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: shop${meta}}
spec:
${spec
  .trim()
  .split('\n')
  .map((l) => `  ${l}`)
  .join('\n')}
`;
const PATH = (p: string) => `rules: [{host: a.example.com, http: {paths: [${p}]}}]`;

test('an Ingress is read with its rules, paths, backends and tls; only the class annotation is kept', () => {
  const inputs = loadText(
    ingress(
      `ingressClassName: istio
rules:
- host: "*.example.com"
  http:
    paths:
    - {path: /a, pathType: Prefix, backend: {service: {name: a, port: {number: 80}}}}
    - {path: /b, pathType: Exact, backend: {service: {name: b, port: {name: http}}}}
- host: nohttp.example.com
tls: [{hosts: [a.example.com], secretName: cert}]`,
      ', annotations: {kubernetes.io/ingress.class: istio, team: x}, creationTimestamp: "2024-01-02T03:04:05Z"',
    ),
  );
  assert.deepEqual(errors(inputs), []);
  const [i] = inputs.ingresses;
  assert.deepEqual(i!.meta.annotations, { 'kubernetes.io/ingress.class': 'istio' });
  assert.equal(i!.creationTimestamp, '2024-01-02T03:04:05Z');
  assert.deepEqual(i!.spec, {
    ingressClassName: 'istio',
    rules: [
      {
        host: '*.example.com',
        paths: [
          { path: '/a', pathType: 'Prefix', backend: { service: { name: 'a', port: { number: 80 } } } },
          { path: '/b', pathType: 'Exact', backend: { service: { name: 'b', port: { name: 'http' } } } },
        ],
      },
      { host: 'nohttp.example.com' },
    ],
    tls: [{ hosts: ['a.example.com'], secretName: 'cert' }],
  });
});

test('invalid Ingresses are refused with an error naming file, kind, namespace/name and field', () => {
  const cases: [string, string][] = [
    [
      PATH('{path: a, pathType: Prefix, backend: {service: {name: a, port: {number: 80}}}}'),
      'spec.rules[0].http.paths[0].path',
    ],
    [
      PATH('{path: /a, pathType: Regex, backend: {service: {name: a, port: {number: 80}}}}'),
      'spec.rules[0].http.paths[0].pathType',
    ],
    [
      PATH('{path: /a//b, pathType: Exact, backend: {service: {name: a, port: {number: 80}}}}'),
      'spec.rules[0].http.paths[0].path',
    ],
    [
      PATH(
        '{path: /a, pathType: Prefix, backend: {service: {name: a, port: {number: 80}}, resource: {kind: X, name: y}}}',
      ),
      'spec.rules[0].http.paths[0].backend',
    ],
    [
      PATH('{path: /a, pathType: Prefix, backend: {service: {name: a, port: {number: 80, name: http}}}}'),
      'spec.rules[0].http.paths[0].backend.service.port',
    ],
    [
      PATH('{path: /a, pathType: Prefix, backend: {service: {name: a, port: {number: 70000}}}}'),
      'spec.rules[0].http.paths[0].backend.service.port.number',
    ],
    ['rules: [{host: 10.0.0.1, http: {paths: []}}]', 'spec.rules[0].host'],
    ['rules: [{host: Bad_Host, http: {paths: []}}]', 'spec.rules[0].host'],
    ['ingressClassName: istio', 'spec'],
  ];
  for (const [spec, field] of cases) {
    const e = onlyError(loadText(ingress(spec), 'ing.yaml'));
    assert.deepEqual(
      { kind: e.kind, namespace: e.namespace, name: e.name, field: e.field, file: e.file },
      { kind: 'Ingress', namespace: 'shop', name: 'web', field, file: 'ing.yaml' },
      spec,
    );
  }
});

test('bounds: more paths than the HTTP route limit are refused as too-large', () => {
  const paths = Array.from(
    { length: 5001 },
    (_, n) => `{path: /p${n}, pathType: Exact, backend: {service: {name: a, port: {number: 80}}}}`,
  );
  const e = onlyError(loadText(ingress(PATH(paths.join(', ')))));
  assert.equal(e.code, 'too-large');
  assert.equal(e.field, 'spec.rules[0].http.paths');
});

test('a defaultBackend gets a warning that it is not served (istiod ignores it); other versions than v1 are refused', () => {
  const inputs = loadText(ingress('defaultBackend: {service: {name: a, port: {number: 80}}}'));
  const w = inputs.diagnostics.find((d) => d.code === 'unsupported-field');
  assert.equal(w?.severity, 'warning');
  assert.equal(w?.field, 'spec.defaultBackend');
  assert.equal(inputs.ingresses.length, 1);
  const beta = onlyError(loadText(ingress(PATH('')).replace('networking.k8s.io/v1', 'networking.k8s.io/v1beta1')));
  assert.equal(beta.code, 'unknown-api-version');
});

test('IngressClass is read (cluster-scoped) with its controller', () => {
  const inputs = loadText(`apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: istio, labels: {a: b}}
spec: {controller: istio.io/ingress-controller}
`);
  assert.deepEqual(errors(inputs), []);
  assert.deepEqual(
    inputs.ingressClasses.map((c) => [c.meta.namespace, c.meta.name, c.spec.controller]),
    [['', 'istio', 'istio.io/ingress-controller']],
  );
});

test('MeshConfig ingress fields: absent where istiod defaults hold, kept where set, an unknown mode refused', () => {
  const mesh = (body: string) =>
    loadText(`apiVersion: v1
kind: ConfigMap
metadata: {name: istio, namespace: istio-system}
data:
  mesh: |
    ${body}
`);
  assert.equal(mesh('ingressClass: istio').meshConfig.ingress, undefined);
  assert.equal(mesh('ingressControllerMode: STRICT').meshConfig.ingress, undefined);
  assert.deepEqual(
    mesh('{ingressControllerMode: DEFAULT, ingressClass: nginx, ingressSelector: gw, ingressService: svc}').meshConfig
      .ingress,
    { ingressClass: 'nginx', ingressControllerMode: 'DEFAULT', ingressSelector: 'gw', ingressService: 'svc' },
  );
  const e = onlyError(mesh('ingressControllerMode: SOMETIMES'));
  assert.equal(e.field, 'data.mesh.ingressControllerMode');
});

test('stored form: the class annotation and the creation time are kept (they decide what is served), other annotations not', () => {
  const raw = {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: {
      name: 'web',
      namespace: 'shop',
      creationTimestamp: '2024-01-02T03:04:05Z',
      uid: 'u',
      annotations: { 'kubernetes.io/ingress.class': 'istio', team: 'x' },
    },
    spec: {
      rules: [
        {
          host: 'a.example.com',
          http: {
            paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'a', port: { number: 80 } } } }],
          },
        },
      ],
    },
    status: { loadBalancer: {} },
  };
  const stored = canonicalObject(retainedForStorage(raw)!);
  assert.deepEqual(stored.metadata, {
    name: 'web',
    namespace: 'shop',
    creationTimestamp: '2024-01-02T03:04:05Z',
    annotations: { 'kubernetes.io/ingress.class': 'istio' },
  });
  assert.equal(stored.status, undefined);
  // Reading the stored form again gives the same Ingress.
  const again = loadText(JSON.stringify(stored));
  assert.deepEqual(again.ingresses[0]!.spec, loadText(JSON.stringify(raw)).ingresses[0]!.spec);
  assert.equal(again.ingresses[0]!.creationTimestamp, '2024-01-02T03:04:05Z');
});

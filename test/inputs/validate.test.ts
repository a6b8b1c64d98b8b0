/**
 * Every bad-input rule: the exact diagnostic, the bad object skipped, the other objects of the
 * same file still there. Each case is a document placed between two valid ones (index 1).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { InputSet } from '../../src/model/inputs.js';
import { errors, loadText } from './helpers.js';

const GOOD_SVC = `apiVersion: v1
kind: Service
metadata: { name: good, namespace: ns1 }
spec: { ports: [{ name: http, port: 80 }] }`;
const GOOD_DR = `apiVersion: networking.istio.io/v1beta1
kind: DestinationRule
metadata: { name: good-dr, namespace: ns1 }
spec: { host: good }`;

interface Case {
  readonly name: string;
  readonly doc: string;
  readonly kind: string;
  readonly field: string;
  readonly code?: string;
  readonly objName?: string;
  readonly namespace?: string;
}

const svc = (spec: string, meta = '{ name: bad, namespace: ns1 }'): string =>
  `apiVersion: v1\nkind: Service\nmetadata: ${meta}\nspec: ${spec}`;
const vs = (http: string, extra = ''): string =>
  `apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: { name: bad, namespace: ns1 }\nspec:\n  hosts: [good]\n${extra}  http: ${http}`;
const dr = (spec: string): string =>
  `apiVersion: networking.istio.io/v1alpha3\nkind: DestinationRule\nmetadata: { name: bad, namespace: ns1 }\nspec: ${spec}`;
const route = (r: string): string => `[{ route: [{ destination: { host: good } }], ${r} }]`;

const CASES: Case[] = [
  {
    name: 'missing metadata.name',
    doc: svc('{ ports: [{ port: 80 }] }', '{ namespace: ns1 }'),
    kind: 'Service',
    field: 'metadata.name',
    code: 'missing-field',
    objName: undefined,
  },
  {
    name: 'empty metadata.name',
    doc: svc('{ ports: [{ port: 80 }] }', '{ name: "", namespace: ns1 }'),
    kind: 'Service',
    field: 'metadata.name',
    code: 'missing-field',
    objName: undefined,
  },
  {
    name: 'invalid DNS name',
    doc: svc('{ ports: [{ port: 80 }] }', '{ name: Bad_Name, namespace: ns1 }'),
    kind: 'Service',
    field: 'metadata.name',
    code: 'invalid-name',
    objName: 'Bad_Name',
  },
  { name: 'port not a number', doc: svc('{ ports: [{ port: "abc" }] }'), kind: 'Service', field: 'spec.ports[0].port' },
  { name: 'port out of range', doc: svc('{ ports: [{ port: 70000 }] }'), kind: 'Service', field: 'spec.ports[0].port' },
  {
    name: 'port zero',
    doc: svc('{ ports: [{ name: a, port: 80 }, { name: b, port: 0 }] }'),
    kind: 'Service',
    field: 'spec.ports[1].port',
  },
  {
    name: 'ports missing',
    doc: svc('{ selector: { app: x } }'),
    kind: 'Service',
    field: 'spec.ports',
    code: 'missing-field',
  },
  { name: 'ports empty', doc: svc('{ ports: [] }'), kind: 'Service', field: 'spec.ports', code: 'missing-field' },
  {
    name: 'duplicate port',
    doc: svc('{ ports: [{ name: a, port: 80 }, { name: b, port: 80 }] }'),
    kind: 'Service',
    field: 'spec.ports[1].port',
  },
  { name: 'ports not a list', doc: svc('{ ports: { port: 80 } }'), kind: 'Service', field: 'spec.ports' },
  {
    name: 'VS hosts empty',
    doc: `apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: { name: bad, namespace: ns1 }\nspec: { hosts: [], http: ${route('')} }`,
    kind: 'VirtualService',
    field: 'spec.hosts',
    code: 'missing-field',
  },
  {
    name: 'VS hosts not a list',
    doc: `apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: { name: bad, namespace: ns1 }\nspec: { hosts: good, http: ${route('')} }`,
    kind: 'VirtualService',
    field: 'spec.hosts',
  },
  {
    name: 'http route without action',
    doc: vs('[{ name: r0 }]'),
    kind: 'VirtualService',
    field: 'spec.http[0]',
    code: 'missing-field',
  },
  {
    name: 'route and redirect',
    doc: vs(route('redirect: { uri: /x }')),
    kind: 'VirtualService',
    field: 'spec.http[0]',
  },
  {
    name: 'weight not a number',
    doc: vs('[{ route: [{ destination: { host: a }, weight: 50 }, { destination: { host: b }, weight: "x" }] }]'),
    kind: 'VirtualService',
    field: 'spec.http[0].route[1].weight',
  },
  {
    name: 'weight over 100',
    doc: vs('[{ route: [{ destination: { host: a }, weight: 150 }] }]'),
    kind: 'VirtualService',
    field: 'spec.http[0].route[0].weight',
  },
  {
    name: 'weights do not sum to 100',
    doc: vs('[{ route: [{ destination: { host: a }, weight: 50 }, { destination: { host: b }, weight: 40 }] }]'),
    kind: 'VirtualService',
    field: 'spec.http[0].route',
  },
  {
    name: 'destination host empty',
    doc: vs('[{ route: [{ destination: { host: "" } }] }]'),
    kind: 'VirtualService',
    field: 'spec.http[0].route[0].destination.host',
    code: 'missing-field',
  },
  {
    name: 'bad regex',
    doc: vs(route('match: [{ uri: { regex: "a(b" } }]')),
    kind: 'VirtualService',
    field: 'spec.http[0].match[0].uri.regex',
  },
  {
    name: 'lookahead regex',
    doc: vs(route('match: [{ headers: { x: { regex: "a(?=b)" } } }]')),
    kind: 'VirtualService',
    field: 'spec.http[0].match[0].headers.x.regex',
  },
  {
    name: 'backreference regex',
    doc: vs(route('match: [{ uri: { regex: "(a)\\\\1" } }]')),
    kind: 'VirtualService',
    field: 'spec.http[0].match[0].uri.regex',
  },
  {
    name: 'StringMatch with two kinds',
    doc: vs(route('match: [{ uri: { exact: /a, prefix: /b } }]')),
    kind: 'VirtualService',
    field: 'spec.http[0].match[0].uri',
  },
  {
    name: 'directResponse status',
    doc: vs('[{ directResponse: { status: 700 } }]'),
    kind: 'VirtualService',
    field: 'spec.http[0].directResponse.status',
  },
  {
    name: 'fault percentage',
    doc: vs(route('fault: { abort: { httpStatus: 500, percentage: { value: 101 } } }')),
    kind: 'VirtualService',
    field: 'spec.http[0].fault.abort.percentage.value',
  },
  {
    name: 'retries attempts negative',
    doc: vs(route('retries: { attempts: -1 }')),
    kind: 'VirtualService',
    field: 'spec.http[0].retries.attempts',
  },
  { name: 'bad duration', doc: vs(route('timeout: 5 seconds')), kind: 'VirtualService', field: 'spec.http[0].timeout' },
  {
    name: 'DR host empty',
    doc: dr('{ host: "" }'),
    kind: 'DestinationRule',
    field: 'spec.host',
    code: 'missing-field',
  },
  {
    name: 'DR duplicate subsets',
    doc: dr('{ host: good, subsets: [{ name: v1 }, { name: v1 }] }'),
    kind: 'DestinationRule',
    field: 'spec.subsets[1].name',
  },
  {
    name: 'DR empty subset name',
    doc: dr('{ host: good, subsets: [{ name: "" }] }'),
    kind: 'DestinationRule',
    field: 'spec.subsets[0].name',
    code: 'missing-field',
  },
  {
    name: 'DR unknown simple LB',
    doc: dr('{ host: good, trafficPolicy: { loadBalancer: { simple: FASTEST } } }'),
    kind: 'DestinationRule',
    field: 'spec.trafficPolicy.loadBalancer.simple',
  },
  {
    name: 'DR consistentHash without key',
    doc: dr('{ host: good, trafficPolicy: { loadBalancer: { consistentHash: {} } } }'),
    kind: 'DestinationRule',
    field: 'spec.trafficPolicy.loadBalancer.consistentHash',
  },
  {
    name: 'DR consistentHash with two keys',
    doc: dr(
      '{ host: good, trafficPolicy: { loadBalancer: { consistentHash: { useSourceIp: true, httpHeaderName: x } } } }',
    ),
    kind: 'DestinationRule',
    field: 'spec.trafficPolicy.loadBalancer.consistentHash',
  },
  {
    name: 'DR unknown tls mode',
    doc: dr('{ host: good, subsets: [{ name: v1, trafficPolicy: { tls: { mode: STRICT } } }] }'),
    kind: 'DestinationRule',
    field: 'spec.subsets[0].trafficPolicy.tls.mode',
  },
  {
    name: 'DR MUTUAL without certs',
    doc: dr('{ host: good, trafficPolicy: { tls: { mode: MUTUAL, clientCertificate: /c.pem } } }'),
    kind: 'DestinationRule',
    field: 'spec.trafficPolicy.tls',
    code: 'missing-field',
  },
  {
    name: 'DR bad duration',
    doc: dr('{ host: good, trafficPolicy: { connectionPool: { tcp: { connectTimeout: 10 } } } }'),
    kind: 'DestinationRule',
    field: 'spec.trafficPolicy.connectionPool.tcp.connectTimeout',
  },
  {
    name: 'unknown apiVersion for a known kind',
    doc: 'apiVersion: networking.istio.io/v2\nkind: VirtualService\nmetadata: { name: bad, namespace: ns1 }\nspec: { hosts: [a] }',
    kind: 'VirtualService',
    field: 'apiVersion',
    code: 'unknown-api-version',
  },
];

const present = (inputs: InputSet): string[] =>
  [...inputs.services, ...inputs.virtualServices, ...inputs.destinationRules]
    .map((o) => `${o.kind}/${o.meta.namespace}/${o.meta.name}`)
    .sort();

for (const c of CASES) {
  test(`invalid input: ${c.name}`, () => {
    const inputs = loadText([GOOD_SVC, c.doc, GOOD_DR].join('\n---\n'), 'cases.yaml');
    const errs = errors(inputs);
    assert.equal(errs.length, 1, JSON.stringify(errs, null, 1));
    const { message, severity, ...where } = errs[0]!;
    assert.equal(severity, 'error');
    assert.ok(message.length > 0);
    const name = 'objName' in c ? c.objName : 'bad';
    assert.deepEqual(where, {
      code: c.code ?? 'invalid-field',
      kind: c.kind,
      namespace: c.namespace ?? 'ns1',
      ...(name !== undefined ? { name } : {}),
      field: c.field,
      file: 'cases.yaml',
      index: 1,
    });
    assert.deepEqual(present(inputs), ['DestinationRule/ns1/good-dr', 'Service/ns1/good']);
  });
}

test('an unknown field is a warning and the object is kept', () => {
  const inputs = loadText(vs('[{ route: [{ destination: { host: good } }], retryPolicy: {} }]'), 'u.yaml');
  assert.deepEqual(errors(inputs), []);
  const w = inputs.diagnostics.filter((d) => d.code === 'unknown-field');
  assert.deepEqual(
    w.map((d) => [d.severity, d.field]),
    [['warning', 'spec.http[0].retryPolicy']],
  );
  assert.equal(inputs.virtualServices.length, 1);
});

test('a single destination may omit its weight; several without weights may not', () => {
  assert.deepEqual(errors(loadText(vs('[{ route: [{ destination: { host: a } }] }]'))), []);
  const two = errors(loadText(vs('[{ route: [{ destination: { host: a } }, { destination: { host: b } }] }]')));
  assert.deepEqual(
    two.map((d) => d.field),
    ['spec.http[0].route'],
  );
});

test('RE2 inline flags are accepted', () => {
  assert.deepEqual(errors(loadText(vs(route('match: [{ headers: { x: { regex: "(?i)^abc$" } } }]')))), []);
});

test('unsupported Istio kinds warn; ProxyConfig (not xDS) and other kinds are info; missing kind is an error', () => {
  const inputs = loadText(
    [
      'apiVersion: networking.istio.io/v1beta1\nkind: ProxyConfig\nmetadata: { name: pc, namespace: ns1 }\nspec: {}',
      'apiVersion: extensions.istio.io/v1alpha1\nkind: WasmPlugin\nmetadata: { name: w }\nspec: {}',
      'apiVersion: apps/v1\nkind: Deployment\nmetadata: { name: d }\nspec: {}',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: other, namespace: istio-system }\ndata: {}',
      'apiVersion: v1\nmetadata: { name: nokind }',
    ].join('\n---\n'),
    'k.yaml',
  );
  const by = (code: string): [string, string | undefined, number | undefined][] =>
    inputs.diagnostics.filter((d) => d.code === code).map((d) => [d.severity, d.kind, d.index]);
  assert.deepEqual(by('unsupported-kind'), [['warning', 'WasmPlugin', 1]]);
  assert.deepEqual(by('ignored-kind'), [
    ['info', 'ConfigMap', 3],
    ['info', 'Deployment', 2],
    ['info', 'ProxyConfig', 0],
  ]);
  assert.match(
    inputs.diagnostics.find((d) => d.kind === 'ProxyConfig')!.message,
    /sidecar injector and istio-agent, not turned into xDS/,
  );
  assert.deepEqual(by('invalid-document'), [['error', undefined, 4]]);
  assert.match(inputs.diagnostics.find((d) => d.code === 'unsupported-kind')!.message, /is not supported yet/);
});

test('duplicates: error, and the kept object does not depend on document order', () => {
  const a = svc('{ ports: [{ name: http, port: 80 }] }', '{ name: dup, namespace: ns1 }');
  const b = svc('{ ports: [{ name: http, port: 81 }] }', '{ name: dup, namespace: ns1 }');
  const one = loadText([a, b].join('\n---\n'), 'd.yaml');
  const two = loadText([b, a].join('\n---\n'), 'd.yaml');
  assert.equal(one.services.length, 1);
  assert.deepEqual(one.services[0]!.ports, two.services[0]!.ports);
  assert.deepEqual(
    errors(one).map((d) => [d.code, d.kind, d.namespace, d.name]),
    [['duplicate-object', 'Service', 'ns1', 'dup']],
  );
});

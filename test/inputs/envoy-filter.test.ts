/**
 * EnvoyFilter (networking.istio.io v1alpha3) validation, as istiod's ValidateEnvoyFilter and the
 * CRD: Istio's own valid and invalid fixtures (pkg/config/validation/testdata/crds) and the cases of
 * pkg/config/validation/envoyfilter/envoyfilter_test.go as facts; the model kept (istiod's
 * convertToEnvoyFilterWrapper: INSERT_* become ADD where a list is not ordered), the warnings for
 * what meshsnap does not apply, inline secret material refused and never stored, the patch bound.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { INPUT_LIMITS } from '../../src/inputs/limits.js';
import { retainedForStorage } from '../../src/inputs/retain.js';
import type { EnvoyFilter } from '../../src/model/envoy-filter.js';
import { FIXTURES } from '../helpers/paths.js';
import { errors, loadText, onlyError } from './helpers.js';

const CRD_CASES = join(FIXTURES, 'istio', 'pkg', 'config', 'validation', 'testdata', 'crds');

/** The documents of a fixture, each as JSON text without its `_err` key, with that key and its object. */
function fixtureDocs(file: string): { text: string; err?: string; name: string; raw: Record<string, unknown> }[] {
  const docs = parseAllDocuments(readFileSync(join(CRD_CASES, file), 'utf8')).map((d) => d.toJSON() as unknown);
  return docs.flatMap((raw) => {
    if (raw === null) return [];
    const o = raw as Record<string, unknown> & { metadata: { name: string } };
    const err = o._err as string | undefined;
    delete o._err;
    return [{ text: JSON.stringify(o), name: o.metadata.name, raw: o, ...(err !== undefined ? { err } : {}) }];
  });
}

/** An EnvoyFilter document with this spec (JSON or YAML flow text). */
const ef = (spec: unknown, meta = '{ name: ef, namespace: ns1 }'): string =>
  `apiVersion: networking.istio.io/v1alpha3\nkind: EnvoyFilter\nmetadata: ${meta}\nspec: ${typeof spec === 'string' ? spec : JSON.stringify(spec)}\n`;

/** The one EnvoyFilter a text loads to (fails when it is refused). */
function loaded(text: string): EnvoyFilter {
  const set = loadText(text);
  assert.deepEqual(errors(set), []);
  assert.equal(set.envoyFilters.length, 1);
  return set.envoyFilters[0]!;
}

const patch = (p: Record<string, unknown>): unknown => ({ configPatches: [p] });

/** `field: message` of the one error a spec gets (and the EnvoyFilter refused). */
function refused(spec: unknown): string {
  const set = loadText(ef(spec));
  assert.equal(set.envoyFilters.length, 0);
  const e = onlyError(set);
  return `${e.field}: ${e.message}`;
}

/** The warnings (`code field`) a spec gets. */
const warnings = (text: string): string[] =>
  loadText(text)
    .diagnostics.filter((d) => d.severity === 'warning')
    .map((d) => `${d.code} ${d.field}`);

test("Istio's valid EnvoyFilter fixtures load without error; WAYPOINT patches are warned about and left out", () => {
  const docs = fixtureDocs('envoyfilter-valid.yaml');
  assert.ok(docs.length >= 5);
  for (const doc of docs) {
    const set = loadText(doc.text, 'envoyfilter-valid.yaml');
    assert.deepEqual(errors(set), [], doc.name);
    assert.equal(set.envoyFilters.length, 1, doc.name);
  }
  const byName = (name: string) => {
    const doc = docs.find((d) => d.name === name)!;
    return { doc, set: loadText(doc.text, 'envoyfilter-valid.yaml') };
  };
  const http = byName('http-filter');
  const raw = http.doc.raw as { spec: { configPatches: { patch: { value: unknown } }[] } };
  assert.deepEqual(http.set.envoyFilters[0]!.configPatches, [
    {
      index: 0,
      applyTo: 'HTTP_FILTER',
      context: 'ANY',
      listener: { filterChain: { filter: { name: 'envoy.filters.network.http_connection_manager' } } },
      operation: 'INSERT_FIRST',
      // The value as written.
      value: raw.spec.configPatches[0]!.patch.value,
    },
  ]);
  assert.equal(http.set.envoyFilters[0]!.priority, 0);
  for (const name of ['waypoint-http-filter', 'waypoint-cluster']) {
    const w = byName(name);
    assert.deepEqual(w.set.envoyFilters[0]!.configPatches, [], name);
    assert.deepEqual(
      w.set.diagnostics.map((d) => `${d.severity} ${d.code} ${d.field}`),
      ['warning unsupported-field spec.configPatches[0].match.context'],
      name,
    );
  }
  const merge = byName('merge-and-replace-list').set.envoyFilters[0]!.configPatches[0]!;
  assert.deepEqual(
    [merge.applyTo, merge.operation, merge.listener],
    ['NETWORK_FILTER', 'MERGE_AND_REPLACE_LIST', { filterChain: { transportProtocol: 'tls' } }],
  );
  const add = byName('add-cluster').set.envoyFilters[0]!.configPatches[0]!;
  assert.deepEqual(
    [add.applyTo, add.operation, add.context, add.value],
    ['CLUSTER', 'ADD', 'ANY', { name: 'lua_cluster' }],
  );
});

test("Istio's invalid EnvoyFilter fixtures are refused, naming file, object and field", () => {
  const fields: Record<string, string> = {
    'waypoint-wrong-context': 'spec.configPatches[0].match',
    'waypoint-wrong-match': 'spec.configPatches[0].match',
    'waypoint-wrong-port': 'spec.configPatches[0].match.waypoint.portNumber',
  };
  const docs = fixtureDocs('envoyfilter-invalid.yaml');
  assert.deepEqual(docs.map((d) => d.name).sort(), Object.keys(fields).sort());
  for (const doc of docs) {
    const set = loadText(doc.text, 'envoyfilter-invalid.yaml');
    assert.equal(set.envoyFilters.length, 0, doc.name);
    const e = errors(set).find((d) => d.field === fields[doc.name]);
    assert.ok(e, `${doc.name}: ${doc.err} — got ${JSON.stringify(errors(set))}`);
    assert.deepEqual(
      [e.file, e.kind, e.namespace, e.name],
      ['envoyfilter-invalid.yaml', 'EnvoyFilter', 'default', doc.name],
    );
  }
  // The CRD's message for a waypoint match outside the WAYPOINT context.
  const wrong = loadText(docs.find((d) => d.name === 'waypoint-wrong-context')!.text);
  assert.ok(errors(wrong).some((d) => d.message === 'only support waypointMatch when context is WAYPOINT'));
});

test("istiod's ValidateEnvoyFilter cases: each error names its field", () => {
  const REMOVE = { operation: 'REMOVE' };
  const cases: [string, unknown, string][] = [
    ['missing applyTo', patch({}), 'spec.configPatches[0].applyTo: missing applyTo'],
    ['applyTo INVALID', patch({ applyTo: 'INVALID', patch: REMOVE }), 'spec.configPatches[0].applyTo: missing applyTo'],
    ['nil patch', patch({ applyTo: 'LISTENER' }), 'spec.configPatches[0].patch: missing patch'],
    [
      'missing operation',
      patch({ applyTo: 'LISTENER', patch: {} }),
      'spec.configPatches[0].patch.operation: missing patch operation',
    ],
    [
      'nil value',
      patch({ applyTo: 'LISTENER', patch: { operation: 'ADD' } }),
      'spec.configPatches[0].patch.value: missing patch value for non-remove operation',
    ],
    [
      'invalid proxy version regex',
      patch({ applyTo: 'LISTENER', match: { proxy: { proxyVersion: '%#@~++==`24c234`' } }, patch: REMOVE }),
      'spec.configPatches[0].match.proxy.proxyVersion: invalid regex for proxy version',
    ],
    [
      'listener with a cluster match',
      patch({ applyTo: 'LISTENER', match: { cluster: {} }, patch: REMOVE }),
      'spec.configPatches[0].match: applyTo for listener class objects cannot have non listener match',
    ],
    [
      'filter match without a name',
      patch({
        applyTo: 'NETWORK_FILTER',
        match: { listener: { filterChain: { sni: '124', filter: {} } } },
        patch: REMOVE,
      }),
      'spec.configPatches[0].match.listener.filterChain.filter.name: filter match has no name to match on',
    ],
    [
      'sub filter with NETWORK_FILTER',
      patch({
        applyTo: 'NETWORK_FILTER',
        match: { listener: { filterChain: { filter: { name: 'random', subFilter: {} } } } },
        patch: REMOVE,
      }),
      'spec.configPatches[0].match.listener.filterChain.filter.subFilter: subfilter match can be used with applyTo HTTP_FILTER only',
    ],
    [
      'sub filter under another filter',
      patch({
        applyTo: 'HTTP_FILTER',
        match: { listener: { filterChain: { filter: { name: 'random', subFilter: {} } } } },
        patch: REMOVE,
      }),
      'spec.configPatches[0].match.listener.filterChain.filter.name: subfilter match requires filter match with envoy.filters.network.http_connection_manager',
    ],
    [
      'sub filter without a name',
      patch({
        applyTo: 'HTTP_FILTER',
        match: {
          listener: {
            filterChain: { filter: { name: 'envoy.filters.network.http_connection_manager', subFilter: {} } },
          },
        },
        patch: REMOVE,
      }),
      'spec.configPatches[0].match.listener.filterChain.filter.subFilter.name: subfilter match has no name to match on',
    ],
    [
      'virtual host with a cluster match',
      patch({ applyTo: 'VIRTUAL_HOST', match: { cluster: {} }, patch: REMOVE }),
      'spec.configPatches[0].match: applyTo for http route class objects cannot have non route configuration match',
    ],
    [
      'cluster with a listener match',
      patch({ applyTo: 'CLUSTER', match: { listener: {} }, patch: REMOVE }),
      'spec.configPatches[0].match: applyTo for cluster class objects cannot have non cluster match',
    ],
    [
      'null config patch (second)',
      { configPatches: [{ applyTo: 'CLUSTER', patch: REMOVE }, null] },
      'spec.configPatches[1]: null config patch',
    ],
    // The CRD's checks.
    [
      'an unknown applyTo',
      patch({ applyTo: 'ROUTE', patch: REMOVE }),
      'spec.configPatches[0].applyTo: must be one of INVALID, LISTENER, FILTER_CHAIN, NETWORK_FILTER, HTTP_FILTER, ROUTE_CONFIGURATION, VIRTUAL_HOST, HTTP_ROUTE, CLUSTER, EXTENSION_CONFIG, BOOTSTRAP, LISTENER_FILTER, got "ROUTE"',
    ],
    [
      'two object types',
      patch({ applyTo: 'CLUSTER', match: { cluster: {}, listener: {} }, patch: REMOVE }),
      'spec.configPatches[0].match: only one of listener, routeConfiguration, cluster or waypoint may be set',
    ],
    [
      'a port number over uint32',
      patch({ applyTo: 'LISTENER', match: { listener: { portNumber: 2 ** 32 } }, patch: REMOVE }),
      'spec.configPatches[0].match.listener.portNumber: must be between 0 and 4294967295, got 4294967296',
    ],
    [
      'a route action',
      patch({
        applyTo: 'HTTP_ROUTE',
        match: { routeConfiguration: { vhost: { route: { action: 'FORWARD' } } } },
        patch: REMOVE,
      }),
      'spec.configPatches[0].match.routeConfiguration.vhost.route.action: must be one of ANY, ROUTE, REDIRECT, DIRECT_RESPONSE, got "FORWARD"',
    ],
    [
      'a value that is not an object',
      patch({ applyTo: 'CLUSTER', patch: { operation: 'ADD', value: 'name: x' } }),
      'spec.configPatches[0].patch.value: must be an object (the JSON config of the object being patched)',
    ],
    [
      'priority over int32',
      { priority: 2 ** 31 },
      'spec.priority: must be between -2147483648 and 2147483647, got 2147483648',
    ],
    [
      'wildcard label',
      { workloadSelector: { labels: { app: '*' } } },
      'spec.workloadSelector.labels: wildcard is not supported in selector: "app=*"',
    ],
    [
      'targetRefs with a workloadSelector',
      {
        workloadSelector: { labels: { app: 'a' } },
        targetRefs: [{ kind: 'Gateway', name: 'g', group: 'gateway.networking.k8s.io' }],
      },
      'spec: only one of targetRefs or workloadSelector can be set',
    ],
    [
      'targetRef to another namespace',
      { targetRefs: [{ kind: 'Gateway', name: 'g', group: 'gateway.networking.k8s.io', namespace: 'other' }] },
      'spec.targetRefs[0].namespace: cross namespace referencing is not currently supported',
    ],
  ];
  for (const [name, spec, want] of cases) {
    const got = refused(spec);
    assert.ok(got.startsWith(want), `${name}: ${got}`);
  }
});

test("istiod's accepted cases: the happy config, a valid proxyVersion, warnings for what istiod warns about", () => {
  const ext = { typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthz' } };
  const happy = loaded(
    ef({
      configPatches: [
        { applyTo: 'CLUSTER', match: { cluster: {} }, patch: { operation: 'ADD', value: { lb_policy: 'RING_HASH' } } },
        {
          applyTo: 'NETWORK_FILTER',
          match: { listener: { filterChain: { name: 'envoy.tcp_proxy' } } },
          patch: { operation: 'INSERT_BEFORE', value: ext },
        },
        {
          applyTo: 'NETWORK_FILTER',
          match: { listener: { filterChain: { name: 'envoy.tcp_proxy' } } },
          patch: { operation: 'INSERT_FIRST', value: ext },
        },
      ],
    }),
  );
  assert.deepEqual(
    happy.configPatches.map((p) => [p.index, p.applyTo, p.operation, p.cluster ?? p.listener]),
    [
      [0, 'CLUSTER', 'ADD', {}],
      [1, 'NETWORK_FILTER', 'INSERT_BEFORE', { filterChain: { name: 'envoy.tcp_proxy' } }],
      [2, 'NETWORK_FILTER', 'INSERT_FIRST', { filterChain: { name: 'envoy.tcp_proxy' } }],
    ],
  );

  const version = loaded(
    ef(
      patch({
        applyTo: 'LISTENER',
        match: { proxy: { proxyVersion: 'release-1\\.2-23434', metadata: { A: 'b' } } },
        patch: { operation: 'REMOVE' },
      }),
    ),
  );
  // Kept for the compile (which skips it: it does not know the proxies' versions).
  assert.deepEqual(version.configPatches[0]!.proxy, { proxyVersion: 'release-1\\.2-23434', metadata: { A: 'b' } });

  const long = ef(
    patch({
      applyTo: 'LISTENER',
      match: { proxy: { proxyVersion: 'a{100}'.repeat(200) } },
      patch: { operation: 'REMOVE' },
    }),
  );
  assert.deepEqual(warnings(long), ['invalid-field spec.configPatches[0].match.proxy.proxyVersion']);
  assert.match(loadText(long).diagnostics[0]!.message, /exceeds 1024 characters and will be ignored/);

  const deprecated = ef(
    patch({
      applyTo: 'HTTP_FILTER',
      match: { listener: { filterChain: { filter: { name: 'envoy.http_connection_manager' } } } },
      patch: { operation: 'INSERT_FIRST', value: {} },
    }),
  );
  assert.deepEqual(warnings(deprecated), [
    'deprecated-field spec.configPatches[0].match.listener.filterChain.filter.name',
  ]);
  assert.match(loadText(deprecated).diagnostics[0]!.message, /using deprecated filter name/);

  const noEffect = ef(
    patch({
      applyTo: 'FILTER_CHAIN',
      match: { listener: { filterChain: { filter: { name: 'envoy.filters.network.tcp_proxy' } } } },
      patch: { operation: 'MERGE', value: {} },
    }),
  );
  assert.deepEqual(warnings(noEffect), ['ignored-field spec.configPatches[0].match.listener.filterChain.filter']);

  const empty = ef({ workloadSelector: {} });
  assert.deepEqual(warnings(empty), ['empty-selector spec.workloadSelector.labels']);
  assert.match(
    loadText(empty).diagnostics[0]!.message,
    /workload selector specified without labels, will be applied to all/,
  );
  assert.equal(loaded(empty).workloadLabels, undefined);
  assert.deepEqual(loaded(ef('{}')).configPatches, []);

  const full = loaded(
    ef(
      { priority: -5, workloadSelector: { labels: { app: 'reviews' } } },
      '{ name: ef, namespace: ns1, creationTimestamp: "2024-01-01T00:00:00Z" }',
    ),
  );
  assert.deepEqual(
    [full.priority, full.workloadLabels, full.creationTimestamp],
    [-5, { app: 'reviews' }, '2024-01-01T00:00:00Z'],
  );
});

test("INSERT_* become ADD on an applyTo whose list is not ordered (istiod's convertToEnvoyFilterWrapper)", () => {
  const kept = new Set(['HTTP_FILTER', 'NETWORK_FILTER', 'HTTP_ROUTE', 'LISTENER_FILTER']);
  const applyTos = [
    'LISTENER',
    'FILTER_CHAIN',
    'NETWORK_FILTER',
    'HTTP_FILTER',
    'ROUTE_CONFIGURATION',
    'VIRTUAL_HOST',
    'HTTP_ROUTE',
    'CLUSTER',
    'LISTENER_FILTER',
  ];
  for (const applyTo of applyTos)
    for (const operation of ['INSERT_BEFORE', 'INSERT_AFTER', 'INSERT_FIRST', 'MERGE', 'REPLACE']) {
      const got = loaded(ef(patch({ applyTo, patch: { operation, value: {} } }))).configPatches[0]!.operation;
      const want = operation.startsWith('INSERT_') && !kept.has(applyTo) ? 'ADD' : operation;
      assert.equal(got, want, `${applyTo} ${operation}`);
    }
  // filterClass: UNSPECIFIED is absent.
  const classes = loaded(
    ef({
      configPatches: [
        { applyTo: 'HTTP_FILTER', patch: { operation: 'ADD', filterClass: 'AUTHZ', value: {} } },
        { applyTo: 'HTTP_FILTER', patch: { operation: 'ADD', filterClass: 'UNSPECIFIED', value: {} } },
      ],
    }),
  );
  assert.deepEqual(
    classes.configPatches.map((p) => p.filterClass),
    ['AUTHZ', undefined],
  );
});

test('what meshsnap does not apply is warned about: EXTENSION_CONFIG, BOOTSTRAP left out; targetRefs, the annotation', () => {
  const text = ef(
    {
      configPatches: [
        { applyTo: 'EXTENSION_CONFIG', patch: { operation: 'ADD', value: { name: 'x' } } },
        { applyTo: 'CLUSTER', patch: { operation: 'REMOVE' }, match: { cluster: { name: 'c' } } },
        { applyTo: 'BOOTSTRAP', patch: { operation: 'MERGE', value: {} } },
      ],
    },
    '{ name: ef, namespace: ns1, annotations: { envoyfilter.istio.io/referenced-services: "a.ns.svc.cluster.local" } }',
  );
  assert.deepEqual(warnings(text).sort(), [
    'unsupported-field metadata.annotations.envoyfilter.istio.io/referenced-services',
    'unsupported-field spec.configPatches[0].applyTo',
    'unsupported-field spec.configPatches[2].applyTo',
  ]);
  // The patch left keeps its position in spec.configPatches.
  assert.deepEqual(loaded(text).configPatches, [
    { index: 1, applyTo: 'CLUSTER', context: 'ANY', cluster: { name: 'c' }, operation: 'REMOVE' },
  ]);

  // A Gateway API Gateway's proxies get it (test/compile/envoy-filter.test.ts); a Service means a waypoint.
  const refs = ef({
    targetRefs: [
      { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' },
      { group: '', kind: 'Service', name: 'svc' },
    ],
  });
  assert.deepEqual(warnings(refs), ['unsupported-field spec.targetRefs[1]']);
  assert.deepEqual(loaded(refs).targetRefs, [
    { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' },
    { group: '', kind: 'Service', name: 'svc' },
  ]);

  // Fields istiod does not match on either.
  const ignored = ef(
    patch({
      applyTo: 'NETWORK_FILTER',
      match: { listener: { portName: 'http', filterChain: { transportSocket: 'tls' } } },
      patch: { operation: 'REMOVE' },
    }),
  );
  assert.deepEqual(warnings(ignored).sort(), [
    'ignored-field spec.configPatches[0].match.listener.filterChain.transportSocket',
    'ignored-field spec.configPatches[0].match.listener.portName',
  ]);
});

/** A cluster patch carrying `tls` as its upstream TLS context value. */
const tlsCluster = (tls: unknown): string =>
  ef(
    patch({
      applyTo: 'CLUSTER',
      patch: {
        operation: 'MERGE',
        value: {
          transport_socket: {
            name: 'envoy.transport_sockets.tls',
            typed_config: {
              '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext',
              ...(tls as object),
            },
          },
        },
      },
    }),
    '{ name: leaky, namespace: ns1 }',
  );

const SECRET = 'TOPSECRETKEYMATERIAL';

test('inline secret material in a patch value refuses the EnvoyFilter, naming where; files and SDS are fine', () => {
  const secretCases: [string, unknown, string][] = [
    [
      'a TLS certificate private key, inline',
      { common_tls_context: { tls_certificates: [{ private_key: { inline_string: SECRET } }] } },
      'common_tls_context.tls_certificates[0].private_key.inline_string',
    ],
    [
      'a TLS certificate chain, inline bytes (camelCase)',
      { commonTlsContext: { tlsCertificates: [{ certificateChain: { inlineBytes: SECRET } }] } },
      'commonTlsContext.tlsCertificates[0].certificateChain.inlineBytes',
    ],
    [
      'a private key password',
      { common_tls_context: { tls_certificates: [{ password: { inline_string: SECRET } }] } },
      'common_tls_context.tls_certificates[0].password.inline_string',
    ],
    [
      'session ticket keys',
      { session_ticket_keys: { keys: [{ inline_bytes: SECRET }] } },
      'session_ticket_keys.keys[0].inline_bytes',
    ],
    ['an HMAC secret', { hmacSecret: { inlineString: SECRET } }, 'hmacSecret.inlineString'],
    ['a client secret', { client_secret: { inline_string: SECRET } }, 'client_secret.inline_string'],
    ['a token secret', { tokenSecret: { inlineBytes: SECRET } }, 'tokenSecret.inlineBytes'],
    ['a PEM private key anywhere', { sni: `-----BEGIN RSA PRIVATE KEY-----\n${SECRET}` }, 'sni'],
  ];
  const base = 'spec.configPatches[0].patch.value.transport_socket.typed_config.';
  for (const [name, tls, where] of secretCases) {
    const set = loadText(tlsCluster(tls));
    assert.equal(set.envoyFilters.length, 0, name);
    const e = onlyError(set);
    assert.deepEqual([e.code, e.field], ['inline-secret', `${base}${where}`], name);
    assert.doesNotMatch(JSON.stringify(set.diagnostics), new RegExp(SECRET), name);
  }
  // A private key held in a file, a certificate from SDS, an inline CA (public) are fine.
  loaded(
    tlsCluster({
      common_tls_context: {
        tls_certificates: [{ certificate_chain: { filename: '/etc/c.pem' }, private_key: { filename: '/etc/k.pem' } }],
        tls_certificate_sds_secret_configs: [{ name: 'default', sds_config: { ads: {}, resource_api_version: 'V3' } }],
        validation_context: { trusted_ca: { inline_string: '-----BEGIN CERTIFICATE-----\nMIIB' } },
      },
    }),
  );
  // An inline DataSource that is not secret (a Lua script's code).
  loaded(
    ef(
      patch({
        applyTo: 'HTTP_FILTER',
        patch: {
          operation: 'INSERT_BEFORE',
          value: { name: 'lua', typed_config: { source_codes: { a: { inline_string: 'x' } } } },
        },
      }),
    ),
  );
});

test('a valid EnvoyFilter is stored with what the compile reads: the whole patch value, the creation time', () => {
  const raw = {
    apiVersion: 'networking.istio.io/v1alpha3',
    kind: 'EnvoyFilter',
    metadata: {
      name: 'lua',
      namespace: 'ns1',
      creationTimestamp: '2024-01-01T00:00:00Z',
      uid: 'u',
      annotations: { note: 'x' },
    },
    spec: {
      priority: 3,
      workloadSelector: { labels: { app: 'a' } },
      configPatches: [
        {
          applyTo: 'HTTP_FILTER',
          match: {
            context: 'SIDECAR_INBOUND',
            listener: {
              filterChain: {
                filter: {
                  name: 'envoy.filters.network.http_connection_manager',
                  subFilter: { name: 'envoy.filters.http.router' },
                },
              },
            },
          },
          patch: {
            operation: 'INSERT_BEFORE',
            value: {
              name: 'envoy.lua',
              typed_config: {
                '@type': 'type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua',
                inlineCode: 'function envoy_on_request(h) end',
                nested: [{ a: 1, b: [true, null, 'x'] }],
              },
            },
          },
        },
      ],
      unknownKnob: 1,
    },
  };
  const stored = JSON.parse(JSON.stringify(retainedForStorage(raw))) as typeof raw;
  assert.deepEqual(stored.metadata, { name: 'lua', namespace: 'ns1', creationTimestamp: '2024-01-01T00:00:00Z' });
  const { unknownKnob: _, ...spec } = raw.spec;
  assert.deepEqual(stored.spec, spec);
  // Storing stored inputs again gives the same.
  assert.equal(JSON.stringify(retainedForStorage(stored)), JSON.stringify(stored));
  // And what loads from the stored form is what loads from the original.
  const a = loadText(JSON.stringify(raw)).envoyFilters[0]!;
  const b = loadText(JSON.stringify(stored)).envoyFilters[0]!;
  assert.deepEqual({ ...b, origin: a.origin, meta: a.meta }, a);
});

test(`configPatches are bounded: ${INPUT_LIMITS.maxEnvoyFilterPatches} accepted, one more refused`, () => {
  const patches = (n: number) => ({
    configPatches: Array.from({ length: n }, () => ({ applyTo: 'CLUSTER', patch: { operation: 'REMOVE' } })),
  });
  assert.equal(
    loaded(ef(patches(INPUT_LIMITS.maxEnvoyFilterPatches))).configPatches.length,
    INPUT_LIMITS.maxEnvoyFilterPatches,
  );
  const set = loadText(ef(patches(INPUT_LIMITS.maxEnvoyFilterPatches + 1)));
  const e = onlyError(set);
  assert.deepEqual([e.code, e.field], ['too-large', 'spec.configPatches']);
  assert.equal(set.envoyFilters.length, 0);
});

test('EnvoyFilter is read from networking.istio.io/v1alpha3 only (the version its CRD serves)', () => {
  const set = loadText(ef('{}').replace('v1alpha3', 'v1'));
  assert.equal(onlyError(set).code, 'unknown-api-version');
  assert.equal(set.diagnostics.filter((d) => d.code === 'unsupported-kind').length, 0);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateMesh } from '../../bench/synthetic.js';
import { compile } from '../../src/compile/index.js';
import type { CompileOutput } from '../../src/compile/types.js';
import { buildInputSet, parseDocuments, type RawDocument } from '../../src/inputs/index.js';
import { encodeMessage, type RouteConfiguration } from '../../src/xds/proto.js';
import { encodeRouteConfiguration, routeConfigEncoderStats } from '../../src/xds/route-config-encoder.js';
import { TypeName } from '../../src/xds/type-urls.js';
import { BOOKINFO_STATE, EXAMPLES, ISTIO_SAMPLES } from '../helpers/paths.js';

function compileFiles(files: readonly string[]): CompileOutput {
  const docs: RawDocument[] = [];
  for (const file of files) docs.push(...parseDocuments(readFileSync(file, 'utf8'), file).docs);
  return compile(buildInputSet(docs)).output;
}

function allRouteConfigs(output: CompileOutput): [string, RouteConfiguration][] {
  const out: [string, RouteConfiguration][] = [];
  for (const [group, table] of output.groups) for (const [name, rc] of table.routes) out.push([`${group}/${name}`, rc]);
  return out;
}

function assertSameBytes(output: CompileOutput): number {
  const rcs = allRouteConfigs(output);
  for (const [id, rc] of rcs) {
    const expected = encodeMessage(TypeName.RouteConfiguration, rc);
    const actual = encodeRouteConfiguration(rc);
    assert.ok(Buffer.from(actual).equals(Buffer.from(expected)), `${id}: ${actual.length} bytes, encodeMessage gives ${expected.length}`);
  }
  return rcs.length;
}

const NET = join(ISTIO_SAMPLES, 'bookinfo', 'networking');
const BOOKSTORE = join(EXAMPLES, 'bookstore');
const bookstoreFiles = (): string[] => [
  ...readdirSync(BOOKSTORE).filter((f) => f.endsWith('.yaml')).map((f) => join(BOOKSTORE, f)),
  ...readdirSync(join(BOOKSTORE, 'traffic')).map((f) => join(BOOKSTORE, 'traffic', f)),
];

test('bookinfo and bookstore: byte-identical to encodeMessage for every route config', () => {
  const scenarios = [
    [BOOKINFO_STATE],
    [BOOKINFO_STATE, join(NET, 'destination-rule-all.yaml'), join(NET, 'virtual-service-reviews-jason-v2-v3.yaml'), join(NET, 'fault-injection-details-v1.yaml')],
    [BOOKINFO_STATE, join(NET, 'destination-rule-all.yaml'), join(NET, 'virtual-service-reviews-50-v3.yaml'), join(NET, 'virtual-service-ratings-test-delay.yaml')],
    bookstoreFiles(),
  ];
  for (const files of scenarios) assert.ok(assertSameBytes(compileFiles(files)) > 0);
});

test('edge cases: no name, no virtual hosts, empty config, fields after virtual_hosts, long virtual hosts', () => {
  const vh = { name: 'a:80', domains: ['a', 'a.ns'], routes: [{ name: 'default', match: { prefix: '/' }, route: { cluster: 'outbound|80||a' } }] };
  const big = { name: 'big:80', domains: Array.from({ length: 3000 }, (_, i) => `host-${i}.example.com`) };
  const cases: RouteConfiguration[] = [
    {},
    { name: '' },
    { name: 'x' },
    { virtual_hosts: [vh] },
    { name: '80', virtual_hosts: [vh, big, vh], validate_clusters: { value: false }, ignore_port_in_host_matching: true, max_direct_response_body_size_bytes: { value: 1 << 20 } },
    { name: '80', virtual_hosts: [], request_headers_to_remove: ['x-a'], most_specific_header_mutations_wins: true },
  ];
  for (const rc of cases) {
    assert.ok(Buffer.from(encodeRouteConfiguration(rc)).equals(Buffer.from(encodeMessage(TypeName.RouteConfiguration, rc))), JSON.stringify(rc).slice(0, 80));
  }
});

test('synthetic mesh: byte-identical; another namespace only encodes its own services\' virtual hosts', () => {
  const mesh = generateMesh({ services: 300, perNamespace: 50 });
  const output = compile(buildInputSet(mesh.docs)).output;
  assert.ok(assertSameBytes(output) > 6);

  // A fresh compile, so no virtual host has been encoded yet.
  const fresh = compile(buildInputSet(mesh.docs)).output;
  const rc = (ns: string) => fresh.groups.get(`routes/${ns}`)?.routes.get('8080') as RouteConfiguration;
  const own = (ns: string) => (rc(ns).virtual_hosts ?? []).filter((vh) => vh.name?.endsWith(`.${ns}.svc.cluster.local:8080`)).length;
  const first = rc('ns-0');
  const second = rc('ns-1');
  const total = first.virtual_hosts?.length ?? 0;
  assert.ok(total > 300, 'every service has port 8080, plus allow_any');

  let before = routeConfigEncoderStats.virtualHostEncodes;
  encodeRouteConfiguration(first);
  assert.equal(routeConfigEncoderStats.virtualHostEncodes - before, total);

  before = routeConfigEncoderStats.virtualHostEncodes;
  encodeRouteConfiguration(second);
  assert.equal(routeConfigEncoderStats.virtualHostEncodes - before, own('ns-1'), 'only the virtual hosts with ns-1 short names are new');
  assert.equal(own('ns-1'), 50);

  before = routeConfigEncoderStats.virtualHostEncodes;
  encodeRouteConfiguration(second);
  encodeRouteConfiguration(first);
  assert.equal(routeConfigEncoderStats.virtualHostEncodes - before, 0, 'encoding again costs nothing');
});

test('a client namespace without services of its own costs no virtual host encodes', () => {
  const output = compileFiles([BOOKINFO_STATE, join(NET, 'destination-rule-all.yaml'), join(NET, 'virtual-service-reviews-50-v3.yaml')]);
  const a = output.groups.get('routes/default')?.routes.get('9080') as RouteConfiguration;
  const b = output.groups.get('routes/istio-system')?.routes.get('9080') as RouteConfiguration;
  assert.ok(a && b);
  encodeRouteConfiguration(a);
  const before = routeConfigEncoderStats.virtualHostEncodes;
  const bytes = encodeRouteConfiguration(b);
  assert.equal(routeConfigEncoderStats.virtualHostEncodes - before, 0);
  assert.ok(Buffer.from(bytes).equals(Buffer.from(encodeMessage(TypeName.RouteConfiguration, b))));
});

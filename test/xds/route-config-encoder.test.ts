import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateMesh } from '../../bench/synthetic.js';
import { compile } from '../../src/compile/index.js';
import type { CompileOutput } from '../../src/compile/types.js';
import { buildInputSet, parseDocuments, type RawDocument } from '../../src/inputs/index.js';
import { encodeWithProtobufjs, type RouteConfiguration } from '../../src/xds/proto.js';
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
    const expected = encodeWithProtobufjs(TypeName.RouteConfiguration, rc);
    const actual = encodeRouteConfiguration(rc);
    assert.ok(
      Buffer.from(actual).equals(Buffer.from(expected)),
      `${id}: ${actual.length} bytes, protobufjs gives ${expected.length}`,
    );
  }
  return rcs.length;
}

const NET = join(ISTIO_SAMPLES, 'bookinfo', 'networking');
const BOOKSTORE = join(EXAMPLES, 'bookstore');
const bookstoreFiles = (): string[] => [
  ...readdirSync(BOOKSTORE)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => join(BOOKSTORE, f)),
  ...readdirSync(join(BOOKSTORE, 'traffic')).map((f) => join(BOOKSTORE, 'traffic', f)),
];

test('bookinfo and bookstore: byte-identical to protobufjs for every route config', () => {
  const scenarios = [
    [BOOKINFO_STATE],
    [
      BOOKINFO_STATE,
      join(NET, 'destination-rule-all.yaml'),
      join(NET, 'virtual-service-reviews-jason-v2-v3.yaml'),
      join(NET, 'fault-injection-details-v1.yaml'),
    ],
    [
      BOOKINFO_STATE,
      join(NET, 'destination-rule-all.yaml'),
      join(NET, 'virtual-service-reviews-50-v3.yaml'),
      join(NET, 'virtual-service-ratings-test-delay.yaml'),
    ],
    bookstoreFiles(),
  ];
  for (const files of scenarios) assert.ok(assertSameBytes(compileFiles(files)) > 0);
});

test('edge cases: no name, no virtual hosts, empty config, fields after virtual_hosts, long virtual hosts', () => {
  const vh = {
    name: 'a:80',
    domains: ['a', 'a.ns'],
    routes: [{ name: 'default', match: { prefix: '/' }, route: { cluster: 'outbound|80||a' } }],
  };
  const big = { name: 'big:80', domains: Array.from({ length: 3000 }, (_, i) => `host-${i}.example.com`) };
  const cases: RouteConfiguration[] = [
    {},
    { name: '' },
    { name: 'x' },
    { virtual_hosts: [vh] },
    {
      name: '80',
      virtual_hosts: [vh, big, vh],
      validate_clusters: { value: false },
      ignore_port_in_host_matching: true,
      max_direct_response_body_size_bytes: { value: 1 << 20 },
    },
    { name: '80', virtual_hosts: [], request_headers_to_remove: ['x-a'], most_specific_header_mutations_wins: true },
  ];
  for (const rc of cases) {
    assert.ok(
      Buffer.from(encodeRouteConfiguration(rc)).equals(
        Buffer.from(encodeWithProtobufjs(TypeName.RouteConfiguration, rc)),
      ),
      JSON.stringify(rc).slice(0, 80),
    );
  }
});

test("synthetic mesh: byte-identical; another namespace only encodes its own services' virtual hosts", () => {
  const mesh = generateMesh({ services: 300, perNamespace: 50 });
  const output = compile(buildInputSet(mesh.docs)).output;
  assert.ok(assertSameBytes(output) > 6);

  // A fresh compile, so no virtual host has been encoded yet.
  const fresh = compile(buildInputSet(mesh.docs)).output;
  const rc = (ns: string) => fresh.groups.get(`routes/${ns}`)?.routes.get('8080') as RouteConfiguration;
  const own = (ns: string) =>
    (rc(ns).virtual_hosts ?? []).filter((vh) => vh.name?.endsWith(`.${ns}.svc.cluster.local:8080`)).length;
  const first = rc('ns-0');
  const second = rc('ns-1');
  const total = first.virtual_hosts?.length ?? 0;
  assert.ok(total > 300, 'every service has port 8080, plus allow_any');

  let before = routeConfigEncoderStats.virtualHostEncodes;
  encodeRouteConfiguration(first);
  assert.equal(routeConfigEncoderStats.virtualHostEncodes - before, total);

  // ns-1's config holds its own services' virtual hosts (short names) and the shared ones of
  // ns-0's services, which ns-0's own config did not use.
  before = routeConfigEncoderStats.virtualHostEncodes;
  encodeRouteConfiguration(second);
  assert.equal(own('ns-0'), 50);
  assert.equal(own('ns-1'), 50);
  assert.equal(routeConfigEncoderStats.virtualHostEncodes - before, own('ns-1') + own('ns-0'));

  // From then on, a namespace costs only its own services' virtual hosts.
  for (const ns of ['ns-2', 'ns-3', 'ns-4', 'ns-5']) {
    before = routeConfigEncoderStats.virtualHostEncodes;
    const bytes = encodeRouteConfiguration(rc(ns));
    assert.equal(routeConfigEncoderStats.virtualHostEncodes - before, own(ns), ns);
    assert.ok(Buffer.from(bytes).equals(Buffer.from(encodeWithProtobufjs(TypeName.RouteConfiguration, rc(ns)))));
  }

  before = routeConfigEncoderStats.virtualHostEncodes;
  encodeRouteConfiguration(second);
  encodeRouteConfiguration(first);
  assert.equal(routeConfigEncoderStats.virtualHostEncodes - before, 0, 'encoding again costs nothing');
});

test('bookinfo: a second client namespace without services of its own costs no virtual host encodes', () => {
  const docs: RawDocument[] = [];
  for (const file of [
    BOOKINFO_STATE,
    join(NET, 'destination-rule-all.yaml'),
    join(NET, 'virtual-service-reviews-50-v3.yaml'),
  ])
    docs.push(...parseDocuments(readFileSync(file, 'utf8'), file).docs);
  const namespaces = ['team-a', 'team-b']
    .map((name) => `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${name}\n`)
    .join('---\n');
  docs.push(...parseDocuments(namespaces, 'namespaces.yaml').docs);
  const output = compile(buildInputSet(docs)).output;
  const rc = (ns: string) => output.groups.get(`routes/${ns}`)?.routes.get('9080') as RouteConfiguration;
  assert.ok(rc('default') && rc('team-a') && rc('team-b'));
  encodeRouteConfiguration(rc('default'));
  let before = routeConfigEncoderStats.virtualHostEncodes;
  encodeRouteConfiguration(rc('team-a'));
  assert.equal(
    routeConfigEncoderStats.virtualHostEncodes - before,
    4,
    "the shared virtual hosts of default's 4 services (allow_any is already done)",
  );
  before = routeConfigEncoderStats.virtualHostEncodes;
  const bytes = encodeRouteConfiguration(rc('team-b'));
  assert.equal(routeConfigEncoderStats.virtualHostEncodes - before, 0);
  assert.ok(Buffer.from(bytes).equals(Buffer.from(encodeWithProtobufjs(TypeName.RouteConfiguration, rc('team-b')))));
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CORS_FILTER, FAULT_FILTER, type HttpFilter } from '../../src/compile/listener/filters.js';
import { buildSidecarHcm, hcmFilter } from '../../src/compile/listener/http-connection-manager.js';
import { inboundHcmFilter } from '../../src/compile/listener/inbound-hcm.js';
import { header, joinFields } from '../../src/xds/wire/splice.js';
import { encodeWithProtobufjs, packAny, takePackedMessage, type RouteConfiguration } from '../../src/xds/proto.js';
import { TypeName } from '../../src/xds/type-urls.js';
import { proxyHeaders } from '../../src/compile/listener/proxy-headers.js';
import { DEFAULT_MESH_CONFIG } from '../../src/model/mesh-config.js';

const DEFAULT_HEADERS = proxyHeaders(DEFAULT_MESH_CONFIG, 'inbound');
/** Every proxyHeaders setting an inbound HCM reads, away from its default. */
const CUSTOM_HEADERS = proxyHeaders(
  {
    ...DEFAULT_MESH_CONFIG,
    proxyHeaders: {
      forwardedClientCert: 'SANITIZE',
      setCurrentClientCertDetails: { subject: false, cert: true, chain: true },
      requestIdDisabled: true,
      serverDisabled: true,
      envoyDebugHeadersDisabled: true,
      xForwardedPort: true,
    },
  },
  'inbound',
);

const routeConfig = (operation: string): RouteConfiguration => ({
  name: 'inbound|8080||',
  virtual_hosts: [
    {
      name: 'inbound|http|80',
      domains: ['*'],
      routes: [
        { name: 'default', match: { prefix: '/' }, decorator: { operation }, route: { cluster: 'inbound|8080||' } },
      ],
    },
  ],
  validate_clusters: { value: false },
});

const cases: {
  what: string;
  operation: string;
  http2: boolean;
  securityFilters: readonly HttpFilter[];
  headers?: typeof DEFAULT_HEADERS;
}[] = [
  { what: 'plain', operation: 'a.ns.svc.cluster.local:80/*', http2: false, securityFilters: [] },
  {
    what: 'every proxy header setting',
    operation: 'a.ns.svc.cluster.local:80/*',
    http2: false,
    securityFilters: [],
    headers: CUSTOM_HEADERS,
  },
  {
    what: 'HTTP/2 with security filters',
    operation: 'b.ns.svc.cluster.local:80/*',
    http2: true,
    securityFilters: [FAULT_FILTER],
  },
  // A route config of 128 bytes or more: its length takes two varint bytes.
  {
    what: 'a long decorator',
    operation: `${'x'.repeat(300)}.ns.svc.cluster.local:80/*`,
    http2: false,
    securityFilters: [CORS_FILTER],
  },
  { what: 'the first template again', operation: 'c.other.svc.cluster.local:80/*', http2: false, securityFilters: [] },
];

for (const c of cases) {
  test(`an inbound HCM spliced from its template encodes as the whole message does (${c.what})`, () => {
    const opts = {
      statPrefix: 'inbound_0.0.0.0_8080',
      routeConfig: routeConfig(c.operation),
      inbound: true as const,
      http2: c.http2,
      securityFilters: c.securityFilters,
      headers: c.headers ?? DEFAULT_HEADERS,
    };
    const fast = inboundHcmFilter(opts);
    const whole = hcmFilter(buildSidecarHcm(opts));
    assert.equal(fast.name, whole.name);
    assert.equal(fast.typed_config?.type_url, whole.typed_config?.type_url);
    const bytes = fast.typed_config?.value as Uint8Array;
    assert.deepEqual([...bytes], [...(whole.typed_config?.value as Uint8Array)]);
    // The same class as the encoder's bytes (a Buffer in Node).
    assert.equal(Object.getPrototypeOf(bytes), Object.getPrototypeOf(whole.typed_config?.value));
    // protobufjs, the reference encoder, agrees.
    const hcm = buildSidecarHcm(opts);
    assert.deepEqual([...bytes], [...encodeWithProtobufjs(TypeName.HttpConnectionManager, hcm)]);
    // The acceptance check walks the message the bytes encode.
    assert.deepEqual(takePackedMessage(fast.typed_config as object), hcm);
  });
}

test('an HCM without an inline route config is packed whole', () => {
  const opts = { statPrefix: 'inbound_0.0.0.0_9090', inbound: true as const, headers: DEFAULT_HEADERS };
  assert.deepEqual(inboundHcmFilter(opts), hcmFilter(buildSidecarHcm(opts)));
  assert.deepEqual(
    [...(inboundHcmFilter(opts).typed_config?.value as Uint8Array)],
    [...packAny(TypeName.HttpConnectionManager, buildSidecarHcm(opts)).value!],
  );
});

test('fields joined from kept encodings: headers with one- and two-byte lengths', () => {
  const body = new Uint8Array(200).fill(7);
  const joined = joinFields([
    new Uint8Array([8, 1]),
    header(4, body.length),
    body,
    header(2, 3),
    new Uint8Array([1, 2, 3]),
  ]);
  assert.deepEqual([...joined.subarray(0, 5)], [8, 1, 0x22, (200 & 0x7f) | 0x80, 1]);
  assert.deepEqual([...joined.subarray(205)], [0x12, 3, 1, 2, 3]);
  assert.equal(joined.length, 2 + 3 + 200 + 2 + 3);
  assert.throws(() => header(16, 1), RangeError);
});

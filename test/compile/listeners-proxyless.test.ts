import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildProxylessListeners } from '../../src/compile/listeners.js';
import { assertListenerRoundTrip, makeContext, port, service, unpack } from './listeners-helpers.js';
import { encodeWithProtobufjs, takePackedMessage, type Any, type HttpConnectionManager } from '../../src/xds/proto.js';
import { TypeName } from '../../src/xds/type-urls.js';

const services = () => [
  service('echo', 'default', [port(7070, 'GRPC'), port(9090, 'TCP')], { clusterIP: '10.96.0.30' }),
  service('reviews', 'default', [port(9080, 'HTTP')], { clusterIP: '10.96.0.11' }),
  service('api', 'other', [port(8080, 'HTTP2')], { headless: true }),
];

test('proxyless: one api_listener named <host>:<port> per HTTP-family port, RDS of the same name, router last', () => {
  const ctx = makeContext(services());
  const listeners = buildProxylessListeners(ctx);
  // The headless `api` has no EDS cluster a proxyless client could use (cluster/grpc.ts): no listener.
  assert.deepEqual(
    [...listeners.keys()],
    ['echo.default.svc.cluster.local:7070', 'reviews.default.svc.cluster.local:9080'],
  );
  for (const [name, l] of listeners) {
    assertListenerRoundTrip(l);
    assert.equal(l.name, name);
    assert.equal(l.filter_chains, undefined, 'gRPC NACKs listeners with filter chains');
    assert.equal(l.listener_filters, undefined);
    const hcm = unpack(l.api_listener?.api_listener);
    assert.deepEqual(hcm.rds, { route_config_name: name, config_source: { ads: {}, resource_api_version: 'V3' } });
    const filters = hcm.http_filters as { name: string }[];
    assert.deepEqual(
      filters.map((f) => f.name),
      ['envoy.filters.http.fault', 'envoy.filters.http.router'],
    );
  }
  assert.deepEqual(listeners.get('echo.default.svc.cluster.local:7070')?.address, {
    socket_address: { address: '10.96.0.30', port_value: 7070 },
  });
});

test('proxyless listeners do not depend on the order of the inputs', () => {
  const a = buildProxylessListeners(makeContext(services()));
  const c = buildProxylessListeners(makeContext([...services()].reverse()));
  assert.deepEqual([...a.entries()], [...c.entries()]);
});

test('a proxyless api_listener HCM (spliced from kept parts) encodes as protobufjs encodes the message it stands for', () => {
  // A long name: the RDS field's length takes two varint bytes.
  const long = `${'a'.repeat(120)}`;
  const ctx = makeContext([...services(), service(long, 'default', [port(8080, 'HTTP')], { clusterIP: '10.96.0.12' })]);
  const listeners = buildProxylessListeners(ctx);
  assert.equal(listeners.size, 3);
  for (const [name, l] of listeners) {
    const any = l.api_listener?.api_listener as Any;
    const hcm = takePackedMessage(any) as HttpConnectionManager;
    assert.equal(hcm.rds?.route_config_name, name);
    assert.deepEqual([...(any.value as Uint8Array)], [...encodeWithProtobufjs(TypeName.HttpConnectionManager, hcm)]);
  }
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildEndpoints, buildServiceEndpoints, deploymentName } from '../../src/compile/endpoints.js';
import { codecOf, decodeMessage, encodeMessage, type ClusterLoadAssignment } from '../../src/xds/proto.js';
import { resourceToJson } from '../../src/xds/json.js';
import { TypeName } from '../../src/xds/type-urls.js';
import { context, destinationRule, endpoint, host, model, service } from './clusters-model.js';

type J = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const dump = (cla: ClusterLoadAssignment | undefined): J => {
  assert.ok(cla, 'assignment exists');
  return resourceToJson(TypeName.ClusterLoadAssignment, encodeMessage(TypeName.ClusterLoadAssignment, cla)) as J;
};
const addresses = (cla: J): string[] =>
  (cla.endpoints ?? []).flatMap((l: J) => l.lb_endpoints.map((e: J) => e.endpoint.address.socket_address.address));

const reviews = service('reviews');
const eps = {
  [host('reviews')]: {
    9080: [
      endpoint('10.0.0.3', {
        labels: { app: 'reviews', version: 'v2' },
        locality: { region: 'us-west', zone: 'b' },
        podName: 'reviews-v2-5b8d9c7f6d-x7k2p',
      }),
      endpoint('10.0.0.1', {
        labels: { app: 'reviews', version: 'v1' },
        locality: { region: 'us-east', zone: 'a' },
        podName: 'reviews-v1-6c8f9d7b5c-abcde',
      }),
      endpoint('10.0.0.2', {
        labels: { app: 'reviews', version: 'v1' },
        locality: { region: 'us-east', zone: 'a' },
        tlsMode: 'disabled',
      }),
      endpoint('10.0.0.4', { labels: { app: 'reviews', version: 'v2' }, health: 'UNHEALTHY' }),
      endpoint('10.0.0.5', { labels: { app: 'reviews', version: 'v2' }, health: 'DRAINING' }),
    ],
  },
};
const dr = destinationRule('default', 'reviews', {
  host: 'reviews',
  subsets: [
    { name: 'v1', labels: { version: 'v1' } },
    { name: 'v2', labels: { version: 'v2' } },
    { name: 'v9', labels: { version: 'v9' } },
  ],
});

test('one assignment per EDS cluster, subsets filter by labels', () => {
  const out = buildEndpoints(context(model([reviews], eps, [dr])));
  assert.deepEqual(
    [...out.keys()].sort(),
    ['', 'v1', 'v2', 'v9'].map((s) => `outbound|9080|${s}|${host('reviews')}`).sort(),
  );
  assert.deepEqual(addresses(dump(out.get(`outbound|9080||${host('reviews')}`))).sort(), [
    '10.0.0.1',
    '10.0.0.2',
    '10.0.0.3',
  ]);
  assert.deepEqual(addresses(dump(out.get(`outbound|9080|v1|${host('reviews')}`))), ['10.0.0.1', '10.0.0.2']);
  assert.deepEqual(addresses(dump(out.get(`outbound|9080|v2|${host('reviews')}`))), ['10.0.0.3']);
  const empty = dump(out.get(`outbound|9080|v9|${host('reviews')}`));
  assert.equal(empty.cluster_name, `outbound|9080|v9|${host('reviews')}`);
  assert.equal(empty.endpoints, undefined, 'a subset selecting nothing still gets an (empty) assignment');
});

test('localities are sorted, weighted by endpoint count, endpoints sorted by address', () => {
  const cla = dump(buildEndpoints(context(model([reviews], eps))).get(`outbound|9080||${host('reviews')}`));
  assert.deepEqual(
    cla.endpoints.map((l: J) => l.locality),
    [
      { region: 'us-east', zone: 'a' },
      { region: 'us-west', zone: 'b' },
    ],
  );
  assert.deepEqual(
    cla.endpoints.map((l: J) => l.load_balancing_weight),
    [2, 1],
  );
  assert.deepEqual(addresses({ endpoints: [cla.endpoints[0]] }), ['10.0.0.1', '10.0.0.2']);
  for (const l of cla.endpoints)
    for (const e of l.lb_endpoints) {
      assert.equal(e.health_status, 'HEALTHY');
      assert.equal(e.load_balancing_weight, 1);
    }
});

test('unhealthy endpoints are left out; draining ones only for persistent-session services', () => {
  const plain = dump(buildEndpoints(context(model([reviews], eps))).get(`outbound|9080||${host('reviews')}`));
  assert.equal(addresses(plain).includes('10.0.0.4'), false);
  assert.equal(addresses(plain).includes('10.0.0.5'), false);
  const sticky = service('reviews', { labels: { 'istio.io/persistent-session': 'session-cookie' } });
  const cla = dump(buildEndpoints(context(model([sticky], eps))).get(`outbound|9080||${host('reviews')}`));
  const draining = cla.endpoints
    .flatMap((l: J) => l.lb_endpoints)
    .find((e: J) => e.endpoint.address.socket_address.address === '10.0.0.5');
  assert.equal(draining?.health_status, 'DRAINING');
  assert.equal(addresses(cla).includes('10.0.0.4'), false);
});

test('endpoint metadata: tlsMode for sidecars, workload telemetry when the pod is known', () => {
  const cla = dump(buildEndpoints(context(model([reviews], eps))).get(`outbound|9080||${host('reviews')}`));
  const byAddr = new Map<string, J>(
    cla.endpoints.flatMap((l: J) => l.lb_endpoints).map((e: J) => [e.endpoint.address.socket_address.address, e]),
  );
  const v1 = byAddr.get('10.0.0.1') as J;
  assert.deepEqual(v1.metadata.filter_metadata['envoy.transport_socket_match'], { tlsMode: 'istio' });
  assert.equal(v1.metadata.filter_metadata.istio.workload, 'reviews-v1;default;reviews;v1;Kubernetes');
  const plaintext = byAddr.get('10.0.0.2') as J;
  assert.equal(plaintext.metadata?.filter_metadata?.['envoy.transport_socket_match'], undefined);
  assert.equal(plaintext.metadata?.filter_metadata?.istio, undefined);
});

test('a non-Istio TLS mode in the DestinationRule drops the tlsMode marker', () => {
  const simple = destinationRule('default', 'reviews', {
    host: 'reviews',
    trafficPolicy: { tls: { mode: 'DISABLE' } },
  });
  const cla = dump(buildEndpoints(context(model([reviews], eps, [simple]))).get(`outbound|9080||${host('reviews')}`));
  for (const l of cla.endpoints)
    for (const e of l.lb_endpoints)
      assert.equal(e.metadata?.filter_metadata?.['envoy.transport_socket_match'], undefined);
});

test('headless and ExternalName services have no assignments; services without endpoints get empty ones', () => {
  const svcs = [service('db', { headless: true }), service('ext', { externalName: 'example.com' }), service('lonely')];
  const out = buildEndpoints(context(model(svcs)));
  assert.deepEqual([...out.keys()], [`outbound|9080||${host('lonely')}`]);
  assert.equal(dump(out.get(`outbound|9080||${host('lonely')}`)).endpoints, undefined);
});

test('buildEndpoints is the union of buildServiceEndpoints', () => {
  const svcs = [reviews, service('ratings'), service('details', { ns: 'other' })];
  const ctx = context(model(svcs, eps, [dr]));
  const all = buildEndpoints(ctx);
  const union = new Map<string, ClusterLoadAssignment>();
  for (const s of ctx.model.services) for (const [n, c] of buildServiceEndpoints(ctx, s)) union.set(n, c);
  assert.deepEqual([...all.keys()].sort(), [...union.keys()].sort());
  for (const [n, c] of all)
    assert.deepEqual(
      encodeMessage(TypeName.ClusterLoadAssignment, c),
      encodeMessage(TypeName.ClusterLoadAssignment, union.get(n) as ClusterLoadAssignment),
    );
});

test('assignments round-trip through protobuf and do not depend on endpoint order', () => {
  const codec = codecOf(TypeName.ClusterLoadAssignment);
  assert.ok(codec);
  const shuffled = { [host('reviews')]: { 9080: [...(eps[host('reviews')]?.[9080] ?? [])].reverse() } };
  const a = buildEndpoints(context(model([reviews], eps, [dr])));
  const b = buildEndpoints(context(model([reviews], shuffled, [dr])));
  for (const [name, cla] of a) {
    const bytes = encodeMessage(TypeName.ClusterLoadAssignment, cla);
    const decoded = decodeMessage(TypeName.ClusterLoadAssignment, bytes);
    assert.deepEqual(
      codec.toObject(decoded, { bytes: String }),
      codec.toObject(codec.fromObject(cla as Record<string, unknown>), { bytes: String }),
      name,
    );
    assert.deepEqual(encodeMessage(TypeName.ClusterLoadAssignment, b.get(name) as ClusterLoadAssignment), bytes, name);
  }
});

test('deployment names are derived from ReplicaSet pod names only', () => {
  assert.equal(deploymentName('reviews-v1-6c8f9d7b5c-abcde'), 'reviews-v1');
  assert.equal(deploymentName('redis-0'), 'redis-0');
});

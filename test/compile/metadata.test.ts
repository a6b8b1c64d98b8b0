import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  istioConfigMetadata,
  istioMetadata,
  ruleClusterMetadata,
  serviceMetadata,
  serviceTelemetry,
} from '../../src/compile/metadata.js';
import { flat } from '../../src/model/flat-string.js';
import type { DestinationRule } from '../../src/model/istio.js';
import type { MeshService } from '../../src/model/service-model.js';
import { encodeWithProtobufjs, type JsonValue } from '../../src/xds/proto.js';

const METADATA = 'envoy.config.core.v3.Metadata';

const service = (name: string): MeshService =>
  ({
    hostname: `${name}.shop.svc.cluster.local`,
    name,
    namespace: shop,
    labels: {},
    headless: false,
    ports: [],
  }) as unknown as MeshService;
const shop = 'shop';
const rule = { kind: 'DestinationRule', meta: { namespace: shop, name: 'reviews-dr' } } as unknown as DestinationRule;

test("a rule cluster's metadata equals istioConfigMetadata's for every subset and ALPN override, field order included", () => {
  const reviews = service('reviews');
  for (const subset of ['', 'v1', 'a-very-long-subset-name'])
    for (const alpnOverride of [false, true]) {
      const extra: Record<string, JsonValue> = { services: [serviceTelemetry(reviews)] };
      if (alpnOverride) extra.alpn_override = 'false';
      if (subset) extra.subset = subset;
      const reference = istioConfigMetadata(rule, extra);
      const fast = ruleClusterMetadata(reviews, rule, subset, alpnOverride);
      assert.deepEqual(fast, reference);
      assert.deepEqual(
        Object.keys(fast.filter_metadata?.istio?.fields ?? {}),
        Object.keys(reference.filter_metadata?.istio?.fields ?? {}),
      );
      assert.deepEqual(encodeWithProtobufjs(METADATA, fast), encodeWithProtobufjs(METADATA, reference));
      assert.ok(Object.isFrozen(fast.filter_metadata?.istio?.fields?.services));
    }
});

test("the clusters of one service share its `services` value; another service's differs", () => {
  const a = service('a');
  const v1 = ruleClusterMetadata(a, rule, 'v1', false).filter_metadata?.istio?.fields;
  const main = ruleClusterMetadata(a, rule, '', true).filter_metadata?.istio?.fields;
  const b = ruleClusterMetadata(service('b'), rule, 'v1', false).filter_metadata?.istio?.fields;
  assert.equal(v1?.services, main?.services);
  assert.notDeepEqual(v1?.services, b?.services);
});

test("a service's metadata equals istioMetadata's of its telemetry, and shares the `services` value", () => {
  const reviews = service('reviews');
  const fast = serviceMetadata(reviews);
  const reference = istioMetadata({ services: [serviceTelemetry(reviews)] });
  assert.deepEqual(fast, reference);
  assert.deepEqual(encodeWithProtobufjs(METADATA, fast), encodeWithProtobufjs(METADATA, reference));
  assert.equal(serviceMetadata(reviews), fast);
  assert.equal(
    fast.filter_metadata?.istio?.fields?.services,
    ruleClusterMetadata(reviews, rule, 'v1', false).filter_metadata?.istio?.fields?.services,
  );
  assert.ok(Object.isFrozen(fast.filter_metadata?.istio));
});

test("a service's main rule metadata is one object per service and rule (its outbound and inbound clusters share it)", () => {
  const reviews = service('reviews');
  const main = ruleClusterMetadata(reviews, rule, '', false);
  assert.equal(ruleClusterMetadata(reviews, rule, '', false), main);
  const other = { ...rule, meta: { ...rule.meta, name: 'other-dr' } } as DestinationRule;
  const byOther = ruleClusterMetadata(reviews, other, '', false);
  assert.notEqual(byOther, main);
  assert.deepEqual(byOther, istioConfigMetadata(other, { services: [serviceTelemetry(reviews)] }));
});

test('flat gives the string it is handed', () => {
  for (const n of [0, 7, 123456]) {
    const built = `outbound|${n}|v1|reviews-${n}.shop.svc.cluster.local`;
    assert.equal(flat(built), built);
    assert.equal(flat(built), `outbound|${n}|v1|reviews-${n}.shop.svc.cluster.local`);
  }
  assert.equal(flat(''), '');
});

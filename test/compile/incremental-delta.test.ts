/**
 * DeltaBuilder's "did this resource change" test: structurally equal messages are the same
 * without being encoded, and anything else is decided by the encodings.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sameResource } from '../../src/compile/incremental/delta.js';
import type { Cluster } from '../../src/xds/proto.js';

const cluster = (over: Partial<Cluster> = {}): Cluster => ({
  name: 'outbound|80||a.ns.svc.cluster.local',
  type: 3,
  connect_timeout: { seconds: 10 },
  metadata: { filter_metadata: { istio: { fields: { services: { listValue: { values: [{ stringValue: 'a' }] } } } } } },
  common_lb_config: { healthy_panic_threshold: { value: 0 } },
  ...over,
});

test('sameResource: separately built equal messages are the same; a changed value is not', () => {
  assert.ok(sameResource('clusters', cluster(), cluster()));
  assert.ok(!sameResource('clusters', cluster(), cluster({ connect_timeout: { seconds: 11 } })));
  assert.ok(
    !sameResource(
      'clusters',
      cluster(),
      cluster({
        metadata: {
          filter_metadata: { istio: { fields: { services: { listValue: { values: [{ stringValue: 'b' }] } } } } },
        },
      }),
    ),
  );
});

test('sameResource: what structure cannot tell is decided by the bytes (-0, map key order)', () => {
  // 0 and -0 are equal to ===, not as encoded doubles.
  assert.ok(
    !sameResource('clusters', cluster(), cluster({ common_lb_config: { healthy_panic_threshold: { value: -0 } } })),
  );
  // Map entries are encoded in insertion order.
  const two = (first: string, second: string): Cluster =>
    cluster({ metadata: { filter_metadata: { [first]: { fields: {} }, [second]: { fields: {} } } } });
  assert.ok(sameResource('clusters', two('a', 'b'), two('a', 'b')));
  assert.ok(!sameResource('clusters', two('a', 'b'), two('b', 'a')));
});

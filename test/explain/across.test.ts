/** `across`: one digest per answer, and per change only the parts that changed (or `details`). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { across, answerDigest, type Explanation } from '../../src/explain/index.js';

const base: Explanation = {
  request: {
    direction: 'outbound',
    host: 'reviews',
    port: 9080,
    protocol: 'http/1.1',
    tls: false,
    method: 'GET',
    path: '/',
    headers: {},
  },
  outcome: 'routed',
  summary: 'route default → outbound|9080||reviews.default.svc.cluster.local',
  listener: { name: '0.0.0.0_9080', why: [] },
  clusters: [
    {
      name: 'outbound|9080||reviews.default.svc.cluster.local',
      weight: 100,
      found: true,
      type: 'EDS',
      provenance: [],
      services: [],
      endpoints: [{ address: '10.244.0.13', port: 9080 }],
      endpointsFrom: 'eds',
    },
  ],
  provenance: [],
  notes: [],
};

test('equal answers have one digest and make no change; the request is not part of the digest', () => {
  assert.equal(answerDigest(base), answerDigest({ ...base }));
  assert.equal(answerDigest(base), answerDigest({ ...base, request: { ...base.request, path: '/x' } }));
  const a = across([
    { version: '1', explanation: base },
    { version: '2', explanation: base },
  ]);
  assert.equal(a.versions[0]?.digest, a.versions[1]?.digest);
  assert.deepEqual(a.changes, []);
});

test('a change names only the parts that changed; a change elsewhere is `details`', () => {
  const moved = {
    ...base,
    clusters: [
      { ...(base.clusters[0] as Explanation['clusters'][number]), endpoints: [{ address: '10.244.0.99', port: 9080 }] },
    ],
  };
  const noted = { ...base, notes: ['runtime fraction 50% assumed to hold'] };
  const a = across([
    { version: '1', explanation: base },
    { version: '2', explanation: moved },
    { version: '3', explanation: moved },
    { version: '4', explanation: noted },
  ]);
  assert.deepEqual(
    a.changes.map((c) => [c.from, c.to, Object.keys(c.parts)]),
    [
      ['1', '2', ['endpoints']],
      ['3', '4', ['endpoints']],
    ],
  );
  assert.deepEqual(a.changes[0]?.parts.endpoints, {
    before: 'outbound|9080||reviews.default.svc.cluster.local: 10.244.0.13:9080',
    after: 'outbound|9080||reviews.default.svc.cluster.local: 10.244.0.99:9080',
  });
  const onlyNotes = across([
    { version: '1', explanation: base },
    { version: '2', explanation: noted },
  ]);
  assert.deepEqual(Object.keys(onlyNotes.changes[0]?.parts ?? {}), ['details']);
});

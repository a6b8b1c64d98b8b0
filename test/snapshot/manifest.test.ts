import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  isValidChannel,
  parseVersionRecord,
  versionHistory,
  versionRecord,
  type VersionDraft,
  type VersionRecord,
} from '../../src/snapshot/manifest.js';

const draft: VersionDraft = {
  digest: 'sha256:' + 'a'.repeat(64),
  createdAt: '2025-01-01T00:00:00.000Z',
  inputsDigest: 'sha256:' + 'b'.repeat(64),
  compiler: { name: 'meshsnap', version: '0.1.0' },
  counts: { clusters: 1, endpoints: 1, listeners: 0, routes: 0, classes: 1, objects: 2 },
  diagnostics: [{ severity: 'warning', code: 'x', message: 'm' }],
};

test('version records chain to their parent; version 1 has none', () => {
  assert.equal(versionRecord('prod', 1, draft).parent, null);
  const r = versionRecord('prod', 7, draft);
  assert.equal(r.parent, 6);
  assert.equal(r.schema, 'meshsnap.version/v1');
  assert.deepEqual(parseVersionRecord(JSON.parse(JSON.stringify(r))), r);
});

test('malformed records are rejected', () => {
  const r = versionRecord('prod', 2, draft);
  assert.throws(() => parseVersionRecord({ ...r, version: 0 }), /bad version/);
  assert.throws(() => parseVersionRecord({ ...r, digest: 'sha256:xyz' }), /bad digest/);
  assert.throws(() => parseVersionRecord({ ...r, counts: { clusters: 1 } }), /bad counts/);
  assert.throws(() => parseVersionRecord({ ...r, schema: 'meshsnap.version/v0' }), /schema/);
});

test('channel names must be safe path segments', () => {
  for (const ok of ['prod', 'team-a.staging', 'v1_2']) assert.ok(isValidChannel(ok), ok);
  for (const bad of ['', '../x', 'a/b', '.hidden', 'a..b', 'x'.repeat(200)])
    assert.equal(isValidChannel(bad), false, bad);
});

test('history follows parents newest first and stops at a gap', async () => {
  const records = new Map<number, VersionRecord>([1, 2, 3, 5].map((n) => [n, versionRecord('c', n, draft)]));
  const get = async (n: number) => records.get(n) ?? null;
  assert.deepEqual(
    (await versionHistory(get, records.get(3) as VersionRecord)).map((r) => r.version),
    [3, 2, 1],
  );
  assert.deepEqual(
    (await versionHistory(get, records.get(5) as VersionRecord)).map((r) => r.version),
    [5],
  );
  assert.deepEqual(
    (await versionHistory(get, records.get(3) as VersionRecord, 2)).map((r) => r.version),
    [3, 2],
  );
});

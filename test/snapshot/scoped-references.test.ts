/**
 * The one-shot build checks its output with references read by a reader of its own (let go
 * with the check). It must report exactly what the shared reader reports, whatever was checked
 * before, and refuse a broken output in a first and a second build holding the same objects.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CompileOutput, OwnedCompileOutput } from '../../src/compile/types.js';
import { buildSnapshotOnce } from '../../src/snapshot/build.js';
import {
  checkConsistency,
  InconsistentSnapshotError,
  type ConsistencyProblem,
} from '../../src/snapshot/consistency.js';
import { ReferenceReader, resourceRefParts } from '../../src/xds/references.js';
import type { RouteConfiguration, VirtualHost } from '../../src/xds/proto.js';
import { A, httpListener, INFO, routeConfig, sampleOutput } from './sample-output.js';

const line = (p: ConsistencyProblem): string =>
  `${p.classId}|${p.code}|${p.group ?? ''}|${p.name}|${p.ref ?? ''}|${p.field ?? ''}`;
const problemLines = (out: CompileOutput, reader?: ReferenceReader): string[] =>
  checkConsistency(out, reader).map(line);

/** The sample mesh, broken three ways: a route to a cluster no group has, an RDS name nobody serves, a virtual host Envoy rejects. */
function broken(): CompileOutput {
  const out = sampleOutput();
  const routes = out.groups.get('routes/default')?.routes;
  const rc = routes?.get('9080') as RouteConfiguration;
  const nowhere: VirtualHost = {
    name: 'nowhere',
    domains: ['nowhere'],
    routes: [{ match: { prefix: '/' }, route: { cluster: 'outbound|1||nowhere' } }],
  };
  const rejected: VirtualHost = { name: 'bad', domains: [], routes: [] };
  routes?.set('9080', { ...rc, virtual_hosts: [...(rc.virtual_hosts ?? []), nowhere, rejected] });
  out.groups.get('outbound-listeners')?.listeners.set('0.0.0.0_7070', httpListener('0.0.0.0_7070', 7070, '7070'));
  return out;
}

test('a reader of its own reports what the shared reader reports, in a first and a second check of the same objects', () => {
  const out = broken();
  const expected = problemLines(out);
  const codes = new Set(expected.map((l) => l.split('|')[1]));
  assert.deepEqual([...codes].sort(), ['envoy-rejects', 'missing-cluster', 'missing-route']);
  assert.deepEqual(problemLines(out, new ReferenceReader()), expected, 'first scoped check');
  assert.deepEqual(problemLines(out, new ReferenceReader()), expected, 'second scoped check, same objects');
  assert.deepEqual(problemLines(broken(), new ReferenceReader()), expected, 'fresh objects');
  assert.deepEqual(problemLines(sampleOutput(), new ReferenceReader()), [], 'the sample itself is clean');
});

test('a reader of its own keeps its parts to itself: the same references, not the shared objects', () => {
  const rc = routeConfig('9080', [A]);
  const scoped = new ReferenceReader();
  const own = scoped.resourceRefParts('routes', rc);
  assert.equal(scoped.resourceRefParts('routes', rc), own, 'read once per reader');
  const shared = resourceRefParts('routes', rc);
  assert.notEqual(own[0], shared[0]);
  assert.deepEqual(
    own.map((p) => p.clusters),
    shared.map((p) => p.clusters),
  );
});

test('the one-shot build refuses a broken output in a first and a second build of the same objects', () => {
  const out = broken();
  const expected = problemLines(out);
  for (let build = 0; build < 2; build++) {
    const owned: OwnedCompileOutput = { ...out, groups: new Map(out.groups) };
    try {
      buildSnapshotOnce(owned, INFO);
      assert.fail(`build ${build} was not refused`);
    } catch (err) {
      assert.ok(err instanceof InconsistentSnapshotError, `build ${build}: ${String(err)}`);
      assert.deepEqual(err.problems.map(line), expected, `build ${build}`);
    }
  }
});

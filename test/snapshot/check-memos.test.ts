/**
 * What the checks of a snapshot build remember between resources and between builds, and that
 * none of it hides a problem: the reference parts shared by route configs (a virtual host in every
 * namespace's config), each part's targets remembered for one check only, and the resources the
 * Envoy validator found broken. A broken resource is caught again when it comes back in a new build.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CompileOutput } from '../../src/compile/types.js';
import { buildSnapshot } from '../../src/snapshot/build.js';
import {
  checkConsistency,
  InconsistentSnapshotError,
  type ConsistencyProblem,
} from '../../src/snapshot/consistency.js';
import { resourceRefParts, resourceRefs } from '../../src/xds/references.js';
import rules from '../../src/xds/gen/validate-rules.js';
import type { RouteConfiguration, VirtualHost } from '../../src/xds/proto.js';
import { TypeName } from '../../src/xds/type-urls.js';
import { ENVOY_RULES, Validator } from '../../src/xds/validate/index.js';
import { A, B, INFO, output, sampleOutput, sidecarClass, staticCluster } from './sample-output.js';

const summary = (ps: readonly ConsistencyProblem[]) =>
  ps.map((p) => `${p.classId} ${p.code} ${p.name} -> ${p.ref ?? ''}`);

const vhost = (name: string, cluster: string): VirtualHost => ({
  name,
  domains: [name],
  routes: [{ match: { prefix: '/' }, route: { cluster } }],
});

test('a route config refers through its virtual hosts: a shared virtual host is one part, and the parts concatenated are its references', () => {
  const shared = vhost('x', A);
  const mirror: VirtualHost = { ...vhost('y', B), request_mirror_policies: [{ cluster: 'mirror' }] };
  const one: RouteConfiguration = { name: '80', virtual_hosts: [shared, mirror] };
  const two: RouteConfiguration = { name: '80', virtual_hosts: [vhost('own', 'local'), shared] };
  const [p1, p2] = [resourceRefParts('routes', one), resourceRefParts('routes', two)];
  assert.equal(p1[0], p2[1], 'the shared virtual host is the same part in both configs');
  assert.deepEqual(resourceRefs('routes', one).clusters, [A, 'mirror', B]);
  assert.deepEqual(resourceRefs('routes', two).clusters, ['local', A]);
  assert.deepEqual(
    p1.flatMap((p) => p.clusters),
    resourceRefs('routes', one).clusters,
  );
  assert.deepEqual(resourceRefParts('endpoints', {}), []);
});

/** Two namespaces' route configs, distinct objects sharing the virtual host of service A. */
function namespaces(clusters: string[]): CompileOutput {
  const shared = vhost('a', A);
  const rc = (): RouteConfiguration => ({ name: '9080', virtual_hosts: [shared, vhost('local', 'BlackHoleCluster')] });
  const cls = (ns: string) => ({
    ...sidecarClass(`sidecar/${ns}/_`, [], 'inbound'),
    groups: ['outbound', `routes/${ns}`],
  });
  return output(
    {
      outbound: { clusters: [...clusters, 'BlackHoleCluster'].map(staticCluster) },
      'routes/ns-1': { routes: [rc()] },
      'routes/ns-2': { routes: [rc()] },
    },
    [cls('ns-1'), cls('ns-2')],
  );
}

test('what a shared virtual host leads to is remembered for one check only: a cluster gone in the next build is reported', () => {
  const present = namespaces([A]);
  assert.deepEqual(checkConsistency(present), []);
  // The same route config objects (and virtual hosts), but A is gone from the clusters.
  const fresh = namespaces([]);
  const groups = new Map(
    [...fresh.groups].map(([id, t]) => [id, id.startsWith('routes/') ? (present.groups.get(id) ?? t) : t]),
  );
  const gone: CompileOutput = { ...fresh, groups };
  const expected = [`sidecar/ns-1/_ missing-cluster 9080 -> ${A}`, `sidecar/ns-2/_ missing-cluster 9080 -> ${A}`];
  assert.deepEqual(summary(checkConsistency(gone)), expected);
  assert.deepEqual(summary(checkConsistency(gone)), expected, 'a second check of the same objects');
  assert.deepEqual(summary(checkConsistency(namespaces([]))), expected, 'fresh objects');
  assert.deepEqual(checkConsistency(present), [], 'and back');
});

const brokenHost: VirtualHost = { name: 'bad', domains: [], routes: [] };

test('the validator remembers a broken resource with its violations: the same ones every time, whatever a caller does with them', () => {
  const v = new Validator(rules, ENVOY_RULES);
  const rc: RouteConfiguration = { name: 'rc', virtual_hosts: [vhost('good', A), brokenHost] };
  const first = v.validate(TypeName.RouteConfiguration, rc);
  assert.deepEqual(
    first.map((x) => `${x.path} ${x.rule}`),
    ['virtual_hosts[1].domains repeated.min_items'],
  );
  first.length = 0;
  assert.deepEqual(
    v.validate(TypeName.RouteConfiguration, rc),
    new Validator(rules, ENVOY_RULES).validate(TypeName.RouteConfiguration, rc),
  );
  assert.equal(v.validate(TypeName.RouteConfiguration, rc).length, 1);
});

test('a resource Envoy rejects is refused again when the same object comes back in a new build', () => {
  const broken: RouteConfiguration = { name: '9090', virtual_hosts: [brokenHost] };
  const withBroken = (): CompileOutput => {
    const out = sampleOutput();
    out.groups.get('routes/default')?.routes.set('9090', broken);
    return out;
  };
  const rejected = (out: CompileOutput) =>
    checkConsistency(out)
      .filter((p) => p.code === 'envoy-rejects')
      .map((p) => `${p.group} ${p.name} ${p.field} ${p.rule}`);
  const expected = ['routes/default 9090 virtual_hosts[0].domains repeated.min_items'];
  assert.deepEqual(rejected(withBroken()), expected);
  assert.deepEqual(rejected(withBroken()), expected, 'a new output holding the same object');
  for (let build = 0; build < 2; build++)
    assert.throws(() => buildSnapshot(withBroken(), INFO), InconsistentSnapshotError, `build ${build}`);
  assert.deepEqual(rejected(sampleOutput()), [], 'without it: clean');
});

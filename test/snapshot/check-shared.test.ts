/**
 * The checks on what route configs share: each client namespace's config holds the same virtual
 * host objects at the same positions, and the checks read a config by comparing it with an earlier
 * one of the same name (consistency.ts, src/xds/validate/). A problem in a shared virtual host is
 * still reported once for every config (and class) it reaches, one in a namespace's own host only
 * there, and every case gives what a check of each namespace alone gives.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CompileOutput } from '../../src/compile/types.js';
import { checkConsistency, type ConsistencyProblem } from '../../src/snapshot/consistency.js';
import type { RouteConfiguration, VirtualHost } from '../../src/xds/proto.js';
import { output, sidecarClass, staticCluster } from './sample-output.js';

/** More than the checks' minimum (64) for comparing configs by position. */
const SERVICES = 100;
const NAMESPACES = ['ns-1', 'ns-2', 'ns-3'];
const clusterOf = (i: number): string => `outbound|80||svc-${i}.default.svc.cluster.local`;

const vhost = (i: number, cluster = clusterOf(i), domains = [`svc-${i}.default.svc.cluster.local`]): VirtualHost => ({
  name: `svc-${i}.default.svc.cluster.local:80`,
  domains,
  routes: [{ match: { prefix: '/' }, route: { cluster } }],
});
const shared = Array.from({ length: SERVICES }, (_, i) => vhost(i));

/** One namespace's config `80`: the shared hosts, with `own` in place at the same positions. */
const config = (own: ReadonlyMap<number, VirtualHost> = new Map()): RouteConfiguration => ({
  name: '80',
  virtual_hosts: shared.map((h, i) => own.get(i) ?? h),
});

function mesh(configs: Record<string, RouteConfiguration>): CompileOutput {
  const groups: Record<string, { clusters?: ReturnType<typeof staticCluster>[]; routes?: RouteConfiguration[] }> = {
    outbound: { clusters: Array.from({ length: SERVICES }, (_, i) => staticCluster(clusterOf(i))) },
  };
  for (const [ns, rc] of Object.entries(configs)) groups[`routes/${ns}`] = { routes: [rc] };
  const classes = Object.keys(configs).map((ns) => ({
    ...sidecarClass(`sidecar/${ns}/_`, [], 'inbound'),
    groups: ['outbound', `routes/${ns}`],
  }));
  return output(groups, classes);
}

const summary = (ps: readonly ConsistencyProblem[]): string[] =>
  ps.map((p) => `${p.classId || p.group} ${p.code} ${p.name} -> ${p.ref ?? p.field ?? ''}`);

/** The problems of each namespace's config checked alone (no earlier config to compare with), in order. */
const alone = (configs: Record<string, RouteConfiguration>): string[] =>
  Object.entries(configs)
    .flatMap(([ns, rc]) => checkConsistency(mesh({ [ns]: rc })))
    .sort((a, b) => (a.message < b.message ? -1 : a.message > b.message ? 1 : 0))
    .map((p) => `${p.classId || p.group} ${p.code} ${p.name} -> ${p.ref ?? p.field ?? ''}`);

const sorted = (ps: readonly ConsistencyProblem[]): string[] =>
  summary([...ps].sort((a, b) => (a.message < b.message ? -1 : a.message > b.message ? 1 : 0)));

test('a shared virtual host that refers to a missing cluster is reported for every namespace config holding it', () => {
  const broken = vhost(7, 'outbound|80||gone.default.svc.cluster.local');
  const configs = Object.fromEntries(NAMESPACES.map((ns) => [ns, config(new Map([[7, broken]]))]));
  const problems = checkConsistency(mesh(configs));
  assert.deepEqual(
    summary(problems),
    NAMESPACES.map((ns) => `sidecar/${ns}/_ missing-cluster 80 -> outbound|80||gone.default.svc.cluster.local`),
  );
  assert.deepEqual(sorted(problems), alone(configs));
});

test("a namespace's own virtual host that refers to a missing cluster is reported for that namespace only", () => {
  const configs: Record<string, RouteConfiguration> = {
    'ns-1': config(new Map([[3, vhost(3, clusterOf(3), ['svc-3.default.svc.cluster.local', 'svc-3'])]])),
    'ns-2': config(new Map([[40, vhost(40, 'outbound|80||gone.default.svc.cluster.local')]])),
    'ns-3': config(new Map([[90, vhost(90, clusterOf(90), ['svc-90.default.svc.cluster.local', 'svc-90'])]])),
  };
  const problems = checkConsistency(mesh(configs));
  assert.deepEqual(summary(problems), [
    'sidecar/ns-2/_ missing-cluster 80 -> outbound|80||gone.default.svc.cluster.local',
  ]);
  assert.deepEqual(sorted(problems), alone(configs));
  // The first config (the one the others are compared with) holding the broken host.
  const first = { 'ns-2': configs['ns-2'] as RouteConfiguration, 'ns-1': configs['ns-1'] as RouteConfiguration };
  assert.deepEqual(summary(checkConsistency(mesh(first))), [
    'sidecar/ns-2/_ missing-cluster 80 -> outbound|80||gone.default.svc.cluster.local',
  ]);
});

test('a shared virtual host Envoy rejects is reported for every config holding it, also after clean builds of the same name', () => {
  // Clean builds first: the validator keeps their virtual host lists to compare the next ones with.
  const clean = Object.fromEntries(NAMESPACES.map((ns) => [ns, config()]));
  assert.deepEqual(checkConsistency(mesh(clean)), []);
  assert.deepEqual(checkConsistency(mesh(clean)), []);
  const broken: VirtualHost = { ...vhost(20), domains: [] };
  const configs = Object.fromEntries(NAMESPACES.map((ns) => [ns, config(new Map([[20, broken]]))]));
  const problems = checkConsistency(mesh(configs));
  assert.deepEqual(
    summary(problems),
    NAMESPACES.map((ns) => `routes/${ns} envoy-rejects 80 -> virtual_hosts[20].domains`),
  );
  assert.deepEqual(sorted(problems), alone(configs));
  // At another position in one namespace only: reported there, at that position.
  const moved: Record<string, RouteConfiguration> = { ...clean, 'ns-2': config(new Map([[61, broken]])) };
  assert.deepEqual(summary(checkConsistency(mesh(moved))), [
    'routes/ns-2 envoy-rejects 80 -> virtual_hosts[61].domains',
  ]);
});

test("a namespace's own virtual host whose domain is a shared host's is refused in that namespace only", () => {
  const clash = vhost(5, clusterOf(5), ['svc-5.default.svc.cluster.local', 'SVC-6.default.svc.cluster.local']);
  const configs: Record<string, RouteConfiguration> = {
    'ns-1': config(),
    'ns-2': config(new Map([[5, clash]])),
    'ns-3': config(),
  };
  const problems = checkConsistency(mesh(configs));
  assert.deepEqual(summary(problems), ['routes/ns-2 envoy-rejects 80 -> virtual_hosts[6].domains[0]']);
  assert.deepEqual(sorted(problems), alone(configs));
});

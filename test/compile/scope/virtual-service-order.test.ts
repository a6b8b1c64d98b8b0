/**
 * Which of several VirtualServices for one host a sidecar uses, per client namespace, as istiod:
 * initVirtualServices (pilot/pkg/model/push_context.go) files each VirtualService as private to its
 * namespace (exportTo `.` or its own name, also from defaultVirtualServiceExportTo), exported to the
 * namespaces it names, or public (`*`); SelectVirtualServices (model/virtualservice.go) takes, for
 * the sidecar's namespace, the private ones, then those exported to it, then the public ones, each
 * list with the namespace's own Gateway API routes first (UnifiedSidecarScoping) and otherwise in
 * MergedVirtualServices' order (configCompareByCreationTime: creationTimestamp, then name, then
 * namespace); route building keeps the first VirtualService per host. Facts from
 * TestVirtualServiceWithExportTo, with every VirtualService on one host so the first one shows.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compile } from '../../../src/compile/index.js';
import { buildInputSet } from '../../../src/inputs/index.js';
import { parseDocuments } from '../../../src/inputs/parse.js';
import type { PipelineResult } from '../../../src/pipeline.js';
import { compileMesh, KNOWN_SERVICES, proxy, service, sidecar, view } from './scope-mesh.js';

const KNOWN = 'known.default.svc.cluster.local';
/** Destinations that tell the VirtualServices apart: `v1`…`v6` of `default`. */
const VERSIONS = [1, 2, 3, 4, 5, 6].map((i) => service(`v${i}`, 'default', `2.0.1.${i}`));
const NAMESPACES = ['third', 'test1', 'test2', 'test3', 'ns1', 'random', 'zzz', 'aaa']
  .map((ns) => `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${ns}}`)
  .join('\n---\n');
const cluster = (version: number) => `outbound|80||v${version}.default.svc.cluster.local`;

interface Options {
  readonly exportTo?: readonly string[];
  readonly created?: string;
}

/** A VirtualService of `ns` for `known.default` sending everything to `v<version>`. */
const vs = (ns: string, name: string, version: number, o: Options = {}) => `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: ${name}, namespace: ${ns}${o.created ? `, creationTimestamp: "${o.created}"` : ''}}
spec:
  hosts: [${KNOWN}]
${o.exportTo ? `  exportTo: [${o.exportTo.map((e) => `"${e}"`).join(', ')}]\n` : ''}  http: [{route: [{destination: {host: v${version}.default.svc.cluster.local, port: {number: 80}}}]}]`;

function compileWith(...docs: string[]): PipelineResult {
  return compileMesh(...VERSIONS, NAMESPACES, ...docs);
}

/** The cluster of known's virtual host (route config 80) in a sidecar of `ns`. */
const knownFrom = (result: PipelineResult, ns: string) => view(result, proxy(ns)).routes['80']?.[`${KNOWN}:80`];

const conflicts = (result: PipelineResult) =>
  result.diagnostics
    .filter((d) => d.code === 'conflicting-virtual-service')
    .map((d) => ({ at: `${d.namespace}/${d.name}`, message: d.message }));

/** The restricted scopes of a compile: the namespaces (and Sidecars) that got a view of their own. */
function scopes(...docs: string[]): string[] {
  const text = [KNOWN_SERVICES, ...VERSIONS, NAMESPACES, ...docs].join('\n---\n');
  const groups = [...compile(buildInputSet(parseDocuments(text, 'mesh.yaml').docs)).output.groups.keys()];
  return [...new Set(groups.filter((id) => id.startsWith('scope/')).map((id) => id.split('/')[1] ?? ''))].sort();
}

test('a private override in the client namespace beats an older public VirtualService that sorts first by name', () => {
  const docs = [
    vs('default', 'a-public', 1, { created: '2024-01-01T00:00:00Z' }),
    vs('not-default', 'z-override', 2, { exportTo: ['.'], created: '2024-06-01T00:00:00Z' }),
  ];
  const result = compileWith(...docs);
  assert.equal(knownFrom(result, 'not-default'), cluster(2));
  assert.equal(knownFrom(result, 'default'), cluster(1));
  assert.equal(knownFrom(result, 'third'), cluster(1));
  // An override by design: nothing is shadowed by age, nothing reported.
  assert.deepEqual(conflicts(result), []);
  // The overriding namespace has a view of its own; the others, which do not see the private one,
  // share one (named after the first of them, aaa).
  assert.deepEqual(scopes(...docs), ['aaa', 'not-default']);
  // Its own name in exportTo is the same as `.` (istiod's controller turns `.` into it).
  const named = compileWith(
    vs('default', 'a-public', 1),
    vs('not-default', 'z-override', 2, { exportTo: ['not-default', 'third'] }),
  );
  assert.equal(knownFrom(named, 'not-default'), cluster(2));
  // third: exported to it by name, before the public one.
  assert.equal(knownFrom(named, 'third'), cluster(2));
  assert.equal(knownFrom(named, 'default'), cluster(1));
});

test('between public VirtualServices the oldest wins, then the first by name, then by namespace; the others are reported', () => {
  const aged = compileWith(
    vs('aaa', 'a-young', 1, { created: '2024-02-01T00:00:00Z' }),
    vs('zzz', 'b-old', 2, { created: '2024-01-01T00:00:00Z' }),
  );
  for (const ns of ['default', 'not-default', 'third']) assert.equal(knownFrom(aged, ns), cluster(2), ns);
  const reported = conflicts(aged);
  assert.deepEqual(
    reported.map((c) => c.at),
    ['aaa/a-young'],
  );
  assert.match(reported[0]?.message ?? '', /zzz\/b-old, aaa\/a-young all route known/);
  assert.match(reported[0]?.message ?? '', /sidecars use zzz\/b-old .*so this one is ignored/);
  // Equal ages (none): the name decides before the namespace (zzz/a before aaa/b).
  const unaged = compileWith(vs('aaa', 'b', 1), vs('zzz', 'a', 2));
  for (const ns of ['default', 'not-default', 'third']) assert.equal(knownFrom(unaged, ns), cluster(2), ns);
  assert.deepEqual(
    conflicts(unaged).map((c) => c.at),
    ['aaa/b'],
  );
  // Same name and age: the namespace decides.
  const sameName = compileWith(vs('zzz', 'a', 1), vs('aaa', 'a', 2));
  assert.equal(knownFrom(sameName, 'third'), cluster(2));
  // Everyone shares the one choice: no view of its own for any namespace.
  assert.deepEqual(
    scopes(
      vs('aaa', 'a-young', 1, { created: '2024-02-01T00:00:00Z' }),
      vs('zzz', 'b-old', 2, { created: '2024-01-01T00:00:00Z' }),
    ),
    [],
  );
});

test("TestVirtualServiceWithExportTo's lists, one host: private, then exported by name, then public, each oldest first", () => {
  // rule1: test1 [., ns1]; rule2: test2 [test2, ns1, test1]; rule3: test3 public; zzz: none (public). istiod's
  // rule3 is [test1, test2, *] (public: `*` wins), which validation rejects (ValidateExportTo), so `*` alone here.
  const docs = [
    vs('test1', 'rule1', 1, { exportTo: ['.', 'ns1'] }),
    vs('test2', 'rule2', 2, { exportTo: ['test2', 'ns1', 'test1'] }),
    vs('test3', 'rule3', 3, { exportTo: ['*'] }),
    vs('zzz', 'zzz', 4),
  ];
  const result = compileWith(...docs);
  // test1: [rule1] private, [rule2] exported, [rule3, zzz] public.
  assert.equal(knownFrom(result, 'test1'), cluster(1));
  // test2: [rule2] private, [rule3, zzz] public.
  assert.equal(knownFrom(result, 'test2'), cluster(2));
  // ns1: [rule1, rule2] exported (by name, no ages), then public.
  assert.equal(knownFrom(result, 'ns1'), cluster(1));
  // random: [rule3, zzz] public.
  assert.equal(knownFrom(result, 'random'), cluster(3));
  assert.equal(knownFrom(result, 'default'), cluster(3));
  // rule2 loses to rule1 among the exported in ns1, and zzz to rule3 among the public ones.
  assert.deepEqual(
    conflicts(result)
      .map((c) => c.at)
      .sort(),
    ['test2/rule2', 'zzz/zzz'],
  );
  assert.match(
    conflicts(result).find((c) => c.at === 'test2/rule2')?.message ?? '',
    /sidecars of test2 use this one, elsewhere test1\/rule1 comes first/,
  );
  // Ages order within a list: rule2 older than rule1 takes ns1; test1 still keeps its private rule1.
  const aged = compileWith(
    vs('test1', 'rule1', 1, { exportTo: ['.', 'ns1'], created: '2024-03-01T00:00:00Z' }),
    vs('test2', 'rule2', 2, { exportTo: ['test2', 'ns1', 'test1'], created: '2024-02-01T00:00:00Z' }),
    vs('test3', 'rule3', 3, { exportTo: ['*'], created: '2024-04-01T00:00:00Z' }),
    vs('zzz', 'zzz', 4, { created: '2024-01-01T00:00:00Z' }),
  );
  assert.equal(knownFrom(aged, 'ns1'), cluster(2));
  assert.equal(knownFrom(aged, 'test1'), cluster(1));
  assert.equal(knownFrom(aged, 'test2'), cluster(2));
  assert.equal(knownFrom(aged, 'random'), cluster(4));
});

test('mesh defaultVirtualServiceExportTo ["."]: VirtualServices without exportTo are private to their namespace', () => {
  const mesh = `apiVersion: meshsnap.dev/v1alpha1
kind: MeshConfig
spec: {defaultVirtualServiceExportTo: ["."]}`;
  const result = compileWith(
    mesh,
    vs('default', 'a-shared', 1, { exportTo: ['*'], created: '2024-01-01T00:00:00Z' }),
    vs('not-default', 'z-own', 2, { created: '2024-06-01T00:00:00Z' }),
  );
  assert.equal(knownFrom(result, 'not-default'), cluster(2));
  assert.equal(knownFrom(result, 'third'), cluster(1));
  assert.equal(knownFrom(result, 'default'), cluster(1));
});

test("a namespace's private VirtualService comes before its own Gateway API route (the private list first), the route before public ones", () => {
  const route = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: override, namespace: not-default}
spec:
  parentRefs: [{group: "", kind: Service, name: known, namespace: default}]
  rules: [{backendRefs: [{name: v3, namespace: default, port: 80}]}]`;
  const grant = `apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: from-not-default, namespace: default}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: not-default}]
  to: [{group: "", kind: Service}]`;
  const publicVs = vs('aaa', 'a-public', 1, { created: '2020-01-01T00:00:00Z' });
  const withRoute = compileWith(route, grant, publicVs);
  assert.equal(knownFrom(withRoute, 'not-default'), cluster(3));
  assert.equal(knownFrom(withRoute, 'third'), cluster(1));
  const result = compileWith(route, grant, publicVs, vs('not-default', 'z-private', 2, { exportTo: ['.'] }));
  assert.equal(knownFrom(result, 'not-default'), cluster(2));
  assert.equal(knownFrom(result, 'default'), cluster(1));
  assert.equal(knownFrom(result, 'third'), cluster(1));
});

test('Sidecars with equal imports in namespaces whose orders differ do not share a view', () => {
  const egress = `{egress: [{hosts: ["*/*"]}]}`;
  const docs = [
    vs('test1', 'rule1', 1, { exportTo: ['test1', 'test2'] }),
    vs('test2', 'rule2', 2, { exportTo: ['test1', 'test2'] }),
    sidecar('test1', egress),
    sidecar('test2', egress),
  ];
  const result = compileWith(...docs);
  // Each namespace's own (private) VirtualService first; the other's is exported to it.
  assert.equal(knownFrom(result, 'test1'), cluster(1));
  assert.equal(knownFrom(result, 'test2'), cluster(2));
  // Without Sidecars: the same.
  const plain = compileWith(...docs.slice(0, 2));
  assert.equal(knownFrom(plain, 'test1'), cluster(1));
  assert.equal(knownFrom(plain, 'test2'), cluster(2));
  // A namespace neither is exported to gets known's own route.
  assert.equal(knownFrom(plain, 'third'), `outbound|80||${KNOWN}`);
});

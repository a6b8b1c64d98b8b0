/**
 * A compile output Envoy would reject is never published. Bookinfo is compiled and published (the
 * library calls of `meshsnap compile`); then seeded random mutations of its compile output, each
 * breaking one Envoy rule in one resource, go down the same publish path (snapshot build, then
 * publishCompiled) and through the watcher's delta path (SnapshotBuilder.applyDelta). Each is
 * refused with an `envoy-rejects` error naming the resource and, when known, the Istio object;
 * the store keeps exactly the first version, and the builder its last snapshot.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compile } from '../../src/compile/index.js';
import type { CompileOutput, GroupId, ResourceTable } from '../../src/compile/types.js';
import { publishCompiled } from '../../src/history/publish.js';
import { parseInputTexts } from '../../src/pipeline.js';
import { buildSnapshot, SnapshotBuilder } from '../../src/snapshot/build.js';
import { checkConsistency, InconsistentSnapshotError } from '../../src/snapshot/consistency.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { COMPILER } from '../../src/version.js';
import type { XdsType } from '../../src/xds/type-urls.js';
import { seededRandom } from '../../bench/synthetic.js';
import { compileAndPublish, sample, STATE, tempStore } from '../history/helpers.js';

type Msg = Record<string, unknown>;
const VS = ['virtual-service-reviews-80-20.yaml', 'virtual-service-ratings-test-delay.yaml'];

interface Mutation {
  readonly what: string;
  readonly type: XdsType;
  /** Whether the mutation applies to this resource. */
  readonly applies: (m: Msg) => boolean;
  /** A changed deep copy. */
  readonly mutate: (m: Msg) => Msg;
}

const copy = (m: Msg): Msg => structuredClone(m);
const routesOf = (rc: Msg): Msg[] => ((rc.virtual_hosts ?? []) as Msg[]).flatMap((vh) => (vh.routes ?? []) as Msg[]);

const MUTATIONS: readonly Mutation[] = [
  {
    what: 'connect_timeout of 0s',
    type: 'clusters',
    applies: (c) => c.connect_timeout !== undefined,
    mutate: (c) => ({ ...copy(c), connect_timeout: { seconds: 0 } }),
  },
  {
    what: 'undefined discovery type',
    type: 'clusters',
    applies: (c) => c.type !== undefined,
    mutate: (c) => ({ ...copy(c), type: 17 }),
  },
  {
    what: 'weights adding up to 0',
    type: 'routes',
    applies: (rc) => routesOf(rc).some((r) => (r.route as Msg | undefined)?.weighted_clusters),
    mutate: (rc) => {
      const out = copy(rc);
      const r = routesOf(out).find((x) => (x.route as Msg | undefined)?.weighted_clusters) as Msg;
      for (const c of ((r.route as Msg).weighted_clusters as Msg).clusters as Msg[]) c.weight = { value: 0 };
      return out;
    },
  },
  {
    what: 'a route without action',
    type: 'routes',
    applies: (rc) => routesOf(rc).length > 0,
    mutate: (rc) => {
      const out = copy(rc);
      const r = routesOf(out)[0] as Msg;
      delete r.route;
      delete r.redirect;
      delete r.direct_response;
      return out;
    },
  },
  {
    what: 'a regex RE2 refuses',
    type: 'routes',
    applies: (rc) => routesOf(rc).length > 0,
    mutate: (rc) => {
      const out = copy(rc);
      (routesOf(out)[0] as Msg).match = { safe_regex: { regex: 'a{2000}' } };
      return out;
    },
  },
  {
    what: 'a domain in two virtual hosts',
    type: 'routes',
    applies: (rc) => ((rc.virtual_hosts ?? []) as Msg[]).length > 1,
    mutate: (rc) => {
      const out = copy(rc);
      const [a, b] = out.virtual_hosts as Msg[];
      (b as Msg).domains = [...((b as Msg).domains as string[]), ((a as Msg).domains as string[])[0] as string];
      return out;
    },
  },
  {
    what: 'a port over 65535',
    type: 'endpoints',
    applies: (cla) => ((cla.endpoints ?? []) as Msg[]).some((l) => ((l.lb_endpoints ?? []) as Msg[]).length > 0),
    mutate: (cla) => {
      const out = copy(cla);
      const l = ((out.endpoints as Msg[]).find((x) => ((x.lb_endpoints ?? []) as Msg[]).length > 0) as Msg)
        .lb_endpoints as Msg[];
      (((l[0] as Msg).endpoint as Msg).address as { socket_address: Msg }).socket_address.port_value = 70000;
      return out;
    },
  },
  {
    what: 'two filter chains with one match',
    type: 'listeners',
    applies: (l) => ((l.filter_chains ?? []) as Msg[]).length > 0 && !l.api_listener,
    mutate: (l) => {
      const out = copy(l);
      const chains = out.filter_chains as Msg[];
      chains.push(structuredClone(chains[0] as Msg));
      return out;
    },
  },
];

/** Every (group, type, name) a mutation applies to, in a stable order; proxyless-only groups left out (Envoy's rules differ there). */
function candidates(output: CompileOutput, m: Mutation): { group: GroupId; name: string; message: Msg }[] {
  const grpcOnly = new Set<GroupId>();
  for (const cls of output.classes) if (cls.generator === 'grpc') for (const g of cls.groups) grpcOnly.add(g);
  for (const cls of output.classes) if (cls.generator !== 'grpc') for (const g of cls.groups) grpcOnly.delete(g);
  const out: { group: GroupId; name: string; message: Msg }[] = [];
  for (const [group, table] of output.groups) {
    if (grpcOnly.has(group)) continue;
    for (const [name, message] of table[m.type] as Map<string, Msg>)
      if (m.applies(message)) out.push({ group, name, message });
  }
  return out;
}

function withResource(output: CompileOutput, group: GroupId, type: XdsType, name: string, message: Msg): CompileOutput {
  const groups = new Map(output.groups);
  const table = { ...(groups.get(group) as ResourceTable) };
  const map = new Map(table[type] as Map<string, Msg>);
  map.set(name, message);
  (table as Record<XdsType, Map<string, Msg>>)[type] = map;
  groups.set(group, table);
  return { ...output, groups };
}

test(
  'fuzzed compile outputs Envoy would reject are refused before publish: nothing stored',
  { timeout: 120_000 },
  async () => {
    const { store, cleanup } = tempStore();
    try {
      const v1 = await compileAndPublish(store, STATE, VS);
      const head = await store.readChannel('main');
      assert.equal(v1, 1);
      const files = [{ file: 'state.yaml', text: STATE }, sample('destination-rule-all.yaml'), ...VS.map(sample)];
      const inputs = parseInputTexts(files);
      const { output } = compile(inputs);
      assert.deepEqual(checkConsistency(output), [], 'the compiled output itself is accepted');
      const builder = new SnapshotBuilder({ inputsDigest: 'x', compiler: COMPILER }, { hasher: nodeSha256Hex });
      const base = builder.build(output);

      const random = seededRandom(18);
      let trials = 0;
      for (const m of MUTATIONS) {
        const all = candidates(output, m);
        assert.ok(all.length > 0, `bookinfo has a resource for "${m.what}"`);
        for (let k = 0; k < 3; k++) {
          const target = all[Math.floor(random() * all.length)] as (typeof all)[number];
          const mutated = m.mutate(target.message);
          const bad = withResource(output, target.group, m.type, target.name, mutated);
          const label = `${m.what} in ${m.type} ${target.name} (group ${target.group})`;

          // 1. The publish path of `meshsnap compile`, the API and the functions: build, then publish.
          await assert.rejects(
            async () => {
              const snapshot = buildSnapshot(bad, { inputsDigest: 'x', compiler: COMPILER }, { hasher: nodeSha256Hex });
              await publishCompiled(
                store,
                'main',
                { snapshot, diagnostics: inputs.diagnostics, stored: undefined as never },
                {},
                new Date().toISOString(),
              );
            },
            (err: unknown) => {
              assert.ok(err instanceof InconsistentSnapshotError, label);
              const rejects = err.problems.filter((p) => p.code === 'envoy-rejects');
              assert.ok(
                rejects.some((p) => p.name === target.name && p.group === target.group && p.type === m.type),
                label,
              );
              assert.ok(
                err.diagnostics.length > 0 &&
                  err.diagnostics.every((d) => d.severity === 'error' && d.code === 'envoy-rejects'),
              );
              const source = rejects.find((p) => p.source)?.source;
              if (source) {
                const d = err.diagnostics.find((x) => x.kind !== undefined);
                assert.ok(
                  d && source.endsWith(`/${d.namespace}/${source.split('/').at(-2)}/${d.name}`),
                  `${label}: the Istio object is named`,
                );
              }
              return true;
            },
          );

          // 2. The watcher's path: a delta with the mutated resource.
          const delta = { [target.group]: { [m.type]: { upserts: new Map([[target.name, mutated]]) } } };
          assert.throws(() => builder.applyDelta(delta as never), InconsistentSnapshotError, label);
          assert.equal(builder.snapshot?.digest, base.digest, `${label}: the builder keeps its last snapshot`);
          trials++;
        }
      }
      assert.equal(trials, MUTATIONS.length * 3);
      assert.deepEqual(await store.listVersions('main'), [1], 'nothing but the first version was stored');
      assert.deepEqual(await store.readChannel('main'), head);
    } finally {
      cleanup();
    }
  },
);

test('a weighted route of a VirtualService that Envoy would reject names that VirtualService', () => {
  const files = [
    { file: 'state.yaml', text: STATE },
    sample('destination-rule-all.yaml'),
    sample('virtual-service-reviews-80-20.yaml'),
  ];
  const { output } = compile(parseInputTexts(files));
  const reviews = candidates(output, MUTATIONS[2] as Mutation)[0];
  assert.ok(reviews);
  const bad = withResource(
    output,
    reviews.group,
    'routes',
    reviews.name,
    (MUTATIONS[2] as Mutation).mutate(reviews.message),
  );
  try {
    buildSnapshot(bad, { inputsDigest: 'x', compiler: COMPILER });
    assert.fail('refused');
  } catch (e) {
    assert.ok(e instanceof InconsistentSnapshotError);
    const d = e.diagnostics.find((x) => x.message.includes('weights add up to 0'));
    assert.ok(d, e.message);
    assert.equal(d.kind, 'VirtualService');
    assert.equal(d.namespace, 'default');
    assert.equal(d.name, 'reviews');
    assert.match(
      d.message,
      /route config \S+ \(group routes\/default, from VirtualService default\/reviews\): virtual_hosts\[\d+\]\.routes\[\d+\]\.route\.weighted_clusters\.clusters: the weights add up to 0/,
    );
    assert.match(e.message, /Envoy would reject it/);
  }
});

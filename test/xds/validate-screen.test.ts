/**
 * The Envoy check that rides on the encoding (src/xds/validate/screen.ts): a screen may doubt a
 * resource the walk finds clean (it is then walked), never the reverse. Checked on the resources
 * of compiled meshes broken one rule at a time (mutants made from the rule table: every field with
 * a rule, in every message the resources hold), on broken `Any` contents, on a shared sub-message
 * whose bytes were kept from an unscreened encoding, and on a message the fast writer hands to
 * protobufjs. And it doubts nothing the walk finds clean in those meshes (a doubt costs a walk).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { queryObjects } from 'node:v8';
import { generateMesh } from '../../bench/synthetic.js';
import { compileOwned } from '../../src/compile/index.js';
import type { OwnedCompileOutput } from '../../src/compile/types.js';
import { buildInputSet } from '../../src/inputs/index.js';
import { parseInputTexts } from '../../src/pipeline.js';
import { proxylessOnlyGroups } from '../../src/snapshot/envoy-acceptance.js';
import { SCREENED_TYPES } from '../../src/snapshot/consistency.js';
import rules from '../../src/xds/gen/validate-rules.js';
import { encodeMessage, packAny } from '../../src/xds/proto.js';
import { TypeName, XDS_TYPE_NAME, type XdsType } from '../../src/xds/type-urls.js';
import { EncodeScreen, encodingValidators, ENVOY_RULES, Validator } from '../../src/xds/validate/index.js';
import type { FieldEntry, FieldRules } from '../../src/xds/validate/rule-table.js';
import { sample, STATE } from '../history/helpers.js';

type Msg = Record<string, unknown>;

/** Whether a fresh screen doubts `message` when it is encoded as `type`. */
function doubts(typeName: string, message: object): boolean {
  const screen = new EncodeScreen(encodingValidators().shallow);
  screen.begin();
  try {
    encodeMessage(typeName, message);
  } catch (e) {
    screen.end();
    throw e;
  }
  return screen.end();
}

const walked = (typeName: string, message: object): number =>
  new Validator(rules, ENVOY_RULES).validate(typeName, message).length;

const bookinfo = (): OwnedCompileOutput => {
  const files = [{ file: 'state.yaml', text: STATE }, sample('destination-rule-all.yaml')];
  for (const vs of ['virtual-service-reviews-80-20.yaml', 'virtual-service-ratings-test-delay.yaml'])
    files.push(sample(vs));
  return compileOwned(parseInputTexts(files)).output;
};
const synthetic = (): OwnedCompileOutput => compileOwned(buildInputSet(generateMesh({ services: 40 }).docs)).output;

/** The resources of the screened types, with whether only proxyless clients load them. */
function screenedResources(output: OwnedCompileOutput): { type: XdsType; message: object; proxyless: boolean }[] {
  const proxyless = proxylessOnlyGroups(output.classes);
  const out: { type: XdsType; message: object; proxyless: boolean }[] = [];
  for (const [id, table] of output.groups)
    for (const type of SCREENED_TYPES)
      for (const message of (table[type] as Map<string, object>).values())
        out.push({ type, message, proxyless: proxyless.has(id) });
  return out;
}

/** Values that break one rule of a field (as many kinds as the rule body has), each with its kind. */
function breaking(f: FieldEntry): [string, unknown][] {
  const r: FieldRules = f.rules ?? {};
  const out: [string, unknown][] = [];
  const wrap = f.type.startsWith('google.protobuf.') && f.type.endsWith('Value');
  const num = (n: number): unknown => (wrap ? { value: n } : n);
  if (r.string) {
    const s = r.string;
    if (s.min_len !== undefined && Number(s.min_len) > 0) out.push(['string.min_len', '']);
    if (s.min_bytes !== undefined && Number(s.min_bytes) > 0) out.push(['string.min_bytes', '']);
    if (s.max_len !== undefined) out.push(['string.max_len', 'x'.repeat(Number(s.max_len) + 1)]);
    if (s.max_bytes !== undefined) out.push(['string.max_bytes', 'x'.repeat(Number(s.max_bytes) + 1)]);
    if (s.well_known_regex) out.push(['string.well_known_regex', 'a\nb']);
  }
  for (const kind of ['uint32', 'int32', 'uint64', 'int64', 'double', 'float'] as const) {
    const n = r[kind];
    if (!n) continue;
    if (n.gt !== undefined) out.push([`${kind}.gt`, num(Number(n.gt))]);
    if (n.gte !== undefined && Number(n.gte) > 0) out.push([`${kind}.gte`, num(Number(n.gte) - 1)]);
    if (n.lt !== undefined) out.push([`${kind}.lt`, num(Number(n.lt))]);
    if (n.lte !== undefined) out.push([`${kind}.lte`, num(Number(n.lte) + 1)]);
  }
  if (r.enum?.defined_only) out.push(['enum.defined_only', 987654]);
  if (r.message?.required) out.push(['message.required', undefined]);
  if (r.repeated?.min_items !== undefined && Number(r.repeated.min_items) > 0) out.push(['repeated.min_items', []]);
  if (r.map?.min_pairs !== undefined && Number(r.map.min_pairs) > 0) out.push(['map.min_pairs', {}]);
  if (r.duration?.gt)
    out.push(['duration.gt', { seconds: Number(r.duration.gt.seconds ?? 0), nanos: r.duration.gt.nanos ?? 0 }]);
  if (r.duration?.required) out.push(['duration.required', undefined]);
  if (r.any?.required) out.push(['any.required', undefined]);
  return out;
}

interface Mutant {
  readonly key: string;
  readonly kind: string;
  readonly message: object;
}

/**
 * Every resource broken at one field, once per (resource type, field path without list positions,
 * rule kind): each message the walk would reach (not inside an `Any`), each field of its type with
 * a rule.
 */
function mutants(type: XdsType, resource: object, seen: Set<string>): Mutant[] {
  const out: Mutant[] = [];
  const visit = (typeName: string, message: Msg, path: (string | number)[]): void => {
    const entry = rules.messages[typeName];
    if (!entry) return;
    for (const f of entry.fields) {
      for (const [kind, value] of breaking(f)) {
        const key = `${type} ${[...path.filter((p) => typeof p === 'string'), f.name].join('.')} ${kind}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const copy = structuredClone(resource) as Msg;
        let at: Msg = copy;
        for (const p of path) at = at[p] as Msg;
        if (value === undefined) delete at[f.name];
        else at[f.name] = value;
        out.push({ key, kind, message: copy });
      }
      const v = message[f.name];
      if (v === null || v === undefined || !rules.messages[f.type]) continue;
      if (f.repeated) (v as Msg[]).forEach((item, i) => visit(f.type, item, [...path, f.name, i]));
      else if (f.map === undefined) visit(f.type, v as Msg, [...path, f.name]);
    }
  };
  visit(XDS_TYPE_NAME[type], resource as Msg, []);
  return out;
}

test('a resource broken at any field with a rule is doubted by the screen (bookinfo and a synthetic mesh)', () => {
  const seen = new Set<string>();
  const kinds = new Set<string>();
  let broken = 0;
  for (const output of [bookinfo(), synthetic()])
    for (const { type, message } of screenedResources(output))
      for (const m of mutants(type, message, seen)) {
        if (walked(XDS_TYPE_NAME[type], m.message) === 0) continue; // a value the rule allows after all
        broken++;
        kinds.add(m.kind);
        assert.ok(doubts(XDS_TYPE_NAME[type], m.message), `not doubted: ${m.key}`);
      }
  assert.ok(broken >= 40, `${broken} broken resources`);
  for (const kind of [
    'string.min_len',
    'uint32.lte',
    'uint32.gt',
    'enum.defined_only',
    'duration.gt',
    'repeated.min_items',
  ])
    assert.ok(kinds.has(kind), `a ${kind} mutant (${[...kinds].join(', ')})`);
});

test('the screen doubts no resource the walk finds clean (but the proxyless listeners, which break rules they are not held to)', () => {
  for (const output of [bookinfo(), synthetic()]) {
    let screened = 0;
    for (const { type, message, proxyless } of screenedResources(output)) {
      const typeName = XDS_TYPE_NAME[type];
      const bad = walked(typeName, message) > 0;
      assert.equal(doubts(typeName, message), bad, `${type} ${(message as { name?: string }).name}`);
      if (bad) assert.ok(proxyless && type === 'listeners', `only proxyless listeners break rules: ${type}`);
      screened++;
    }
    assert.ok(screened > 50);
  }
});

test("broken Any contents are doubted: a cluster's transport socket with a 256-byte SNI", () => {
  const cluster = (sni: string): object => ({
    name: 'outbound|9080||reviews.default.svc.cluster.local',
    type: 3,
    eds_cluster_config: { eds_config: { ads: {} } },
    connect_timeout: { seconds: 10 },
    transport_socket: {
      name: 'envoy.transport_sockets.tls',
      typed_config: packAny('envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext', { sni }),
    },
  });
  assert.equal(doubts(TypeName.Cluster, cluster('reviews.example')), false);
  assert.equal(doubts(TypeName.Cluster, cluster('x'.repeat(256))), true);
});

test('a shared sub-message whose bytes were kept from an unscreened encoding is screened when met again', () => {
  // A frozen transport socket (the compiler's mark of a shared one: its bytes are kept) without a name.
  const socket = Object.freeze({ name: '', typed_config: undefined });
  const cluster = (name: string): object => ({
    name,
    type: 3,
    eds_cluster_config: { eds_config: { ads: {} } },
    connect_timeout: { seconds: 10 },
    transport_socket: socket,
  });
  assert.ok(walked(TypeName.Cluster, cluster('a')) > 0, 'the socket breaks a rule');
  encodeMessage(TypeName.Cluster, cluster('a')); // its bytes kept, not screened
  assert.equal(doubts(TypeName.Cluster, cluster('b')), true, 'met again while screening');
  assert.equal(doubts(TypeName.Cluster, cluster('c')), true, 'and again: a doubted one is never taken for clean');
});

test('a message the fast writer hands to protobufjs is doubted (it is not screened)', () => {
  const cluster = {
    name: 'outbound|9080||reviews.default.svc.cluster.local',
    type: 3,
    eds_cluster_config: { eds_config: { ads: {} } },
    connect_timeout: { seconds: 10 },
    per_connection_buffer_limit_bytes: { value: 1024 },
    $unknowns: [],
  };
  assert.equal(walked(TypeName.Cluster, cluster), 0);
  assert.equal(doubts(TypeName.Cluster, cluster), true);
  const { $unknowns: _, ...plain } = cluster;
  assert.equal(doubts(TypeName.Cluster, plain), false);
});

test("the encoding check's validators remember weakly: a screened message dies with its build", async () => {
  const { deep, shallow } = encodingValidators();
  const screen = new EncodeScreen(shallow);
  let ref: WeakRef<object> | undefined;
  (() => {
    const any = packAny('envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext', { sni: 'a.example' });
    ref = new WeakRef(any);
    const cluster = {
      name: 'c',
      type: 3,
      eds_cluster_config: { eds_config: { ads: {} } },
      connect_timeout: { seconds: 1 },
      transport_socket: { name: 'envoy.transport_sockets.tls', typed_config: any },
    };
    screen.begin();
    encodeMessage(TypeName.Cluster, cluster);
    assert.equal(screen.end(), false);
  })();
  await nextTurn(); // a WeakRef's target stays alive until the end of the job that made it
  queryObjects(Object, { format: 'count' }); // a full collection
  assert.equal(ref?.deref(), undefined, 'the packed config is not kept by the validators');
  assert.ok(deep && shallow);
});

/**
 * The pipeline validates each document once (src/inputs/retain.ts buildInputSetRetaining): that one
 * tracked pass must give the same InputSet as buildInputSet and the same stored projection as
 * retainedForStorage (the watcher's, one object at a time) and as a tracking view alone
 * (retainedByTracking, the reference), for every golden case's inputs and the benchmark's
 * synthetic mesh, and no tracking Proxy may reach the InputSet the compiler reads.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { types } from 'node:util';
import { generateMesh } from '../../bench/synthetic.js';
import { buildInputSet } from '../../src/inputs/load.js';
import { readInputFiles } from '../../src/inputs/files.js';
import type { RawDocument } from '../../src/inputs/parse.js';
import { buildInputSetRetaining, retainedByTracking, retainedForStorage } from '../../src/inputs/retain.js';
import { compileDocuments, parseTexts } from '../../src/pipeline.js';
import type { InputSet } from '../../src/model/inputs.js';
import type { Raw } from '../../src/inputs/validate/reader.js';
import { inputSetAndStoredInputs, storedInputsOfDocuments } from '../../src/snapshot/stored-inputs/index.js';
import { EXAMPLES, FIXTURES, REPO } from '../helpers/paths.js';

const GOLDEN = join(REPO, 'test', 'golden');

async function goldenDocuments(name: string): Promise<RawDocument[]> {
  const dir = join(GOLDEN, name);
  const spec = JSON.parse(readFileSync(join(dir, 'case.json'), 'utf8')) as { inputs: string[] };
  const roots: Record<string, string> = { fixtures: FIXTURES, examples: EXAMPLES, case: dir };
  const paths = spec.inputs.map((ref) => {
    const [scheme = '', ...rest] = ref.split(':');
    const root = roots[scheme];
    if (root === undefined) throw new Error(`bad input reference ${ref}`);
    return join(root, rest.join(':'));
  });
  return parseTexts(await readInputFiles(paths)).documents;
}

/** Every Proxy reachable from a value (the InputSet is plain data). */
function proxiesIn(value: unknown, seen = new Set<object>()): number {
  if (value === null || typeof value !== 'object' || seen.has(value)) return 0;
  seen.add(value);
  if (types.isProxy(value)) return 1;
  let n = 0;
  for (const v of Object.values(value)) n += proxiesIn(v, seen);
  return n;
}

function onePass(docs: readonly RawDocument[]): { inputs: InputSet; retained: (Raw | null)[] } {
  const retained: (Raw | null)[] = [];
  const seen: RawDocument[] = [];
  const inputs = buildInputSetRetaining(docs, (kept, doc) => {
    retained.push(kept);
    seen.push(doc);
  });
  assert.deepEqual(seen, docs, 'every document is given, in order');
  return { inputs, retained };
}

function assertOnePassMatches(docs: readonly RawDocument[]): void {
  const { inputs, retained } = onePass(docs);
  assert.deepEqual(inputs, buildInputSet(docs));
  assert.deepEqual(
    retained,
    docs.map((d) => retainedForStorage(d.object)),
  );
  assert.deepEqual(
    retained,
    docs.map((d) => retainedByTracking(d.object)),
  );
  assert.equal(proxiesIn(inputs), 0, 'a tracking Proxy reached the InputSet');
}

const cases = readdirSync(GOLDEN)
  .filter((d) => existsSync(join(GOLDEN, d, 'case.json')))
  .sort();

test('one validation pass: the same InputSet and stored projections as two, for every golden case', async () => {
  assert.ok(cases.length > 10);
  for (const name of cases) {
    const docs = await goldenDocuments(name);
    assert.ok(docs.length > 0, name);
    assertOnePassMatches(docs);
  }
});

test('one validation pass: the synthetic mesh, and the pipeline stores what storedInputsOfDocuments stores', () => {
  const { docs } = generateMesh({ services: 60 });
  assertOnePassMatches(docs);
  const twoPasses = storedInputsOfDocuments(docs);
  const { inputs, stored } = inputSetAndStoredInputs(docs);
  assert.deepEqual(inputs, buildInputSet(docs));
  assert.equal(stored.digest, twoPasses.digest);
  assert.deepEqual(stored.objects, twoPasses.objects);
  assert.deepEqual(stored.documents, twoPasses.documents);
  assert.equal(compileDocuments(docs).stored.digest, twoPasses.digest);
});

test('one validation pass: rejected, unknown, kindless and frozen-member documents', () => {
  const frozenSpec = Object.freeze({ hosts: Object.freeze(['a.default.svc.cluster.local']), extra: { secret: 'x' } });
  const objects: Record<string, unknown>[] = [
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'default' }, data: { k: 'c2VjcmV0' } },
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'bad', namespace: 'default' }, spec: { ports: 'nope' } },
    { apiVersion: 'v1', metadata: { name: 'kindless' } },
    {
      apiVersion: 'networking.istio.io/v1',
      kind: 'VirtualService',
      metadata: { name: 'frozen', namespace: 'default', annotations: { a: 'b' } },
      spec: frozenSpec,
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'ok', namespace: 'default', labels: { app: 'ok' }, uid: 'u' },
      spec: { ports: [{ port: 80, name: 'http' }], selector: { app: 'ok' }, unknownField: { token: 't' } },
    },
  ];
  const docs = objects.map((object, index) => ({ file: 'mixed.yaml', index, object }));
  assertOnePassMatches(docs);
  const { retained } = onePass(docs);
  assert.equal(retained[0], null);
  assert.equal(retained[2], null);
  assert.ok(retained[1] && !('spec' in retained[1]), 'a rejected object is stored redacted');
  assert.ok(retained[4] && !JSON.stringify(retained[4]).includes('token'), 'unknown fields are not stored');
});

test('one validation pass: kinds read under a recorder (Pods) with an object at two paths, and with frozen members', () => {
  // A YAML alias: one object read as a container (its ports) and as a condition (type, status).
  const shared: Record<string, unknown> = {
    type: 'Ready',
    status: 'True',
    name: 'app',
    ports: [{ containerPort: 8080, name: 'http' }],
    env: [{ name: 'TOKEN', value: 'secret' }],
  };
  const pod = (name: string, spec: unknown, status: unknown): Record<string, unknown> => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels: { app: 'a' }, annotations: { note: 'n' } },
    spec,
    status,
  });
  const frozenSpec = Object.freeze({ containers: Object.freeze([{ name: 'app', env: [{ name: 'K', value: 'v' }] }]) });
  const docs = [
    pod('aliased', { containers: [shared] }, { podIP: '10.0.0.1', conditions: [shared] }),
    pod('frozen', frozenSpec, { podIP: '10.0.0.2', phase: 'Running' }),
    pod('plain', { containers: [{ name: 'app', ports: [{ containerPort: 80 }], env: [{ name: 'X' }] }] }, {}),
  ].map((object, index) => ({ file: 'pods.yaml', index, object }));
  assertOnePassMatches(docs);
  const { retained } = onePass(docs);
  const [aliased, frozen, plain] = retained.map((r) => JSON.parse(JSON.stringify(r)) as unknown);
  const at = (v: unknown, ...path: (string | number)[]): unknown =>
    path.reduce((x: unknown, k) => (x as Record<string | number, unknown> | undefined)?.[k], v);
  assert.deepEqual(at(aliased, 'spec', 'containers', 0), { ports: [{ containerPort: 8080, name: 'http' }] });
  assert.deepEqual(at(aliased, 'status', 'conditions', 0), { type: 'Ready', status: 'True' });
  assert.deepEqual(at(frozen, 'spec'), frozenSpec, "a frozen object's members are kept whole");
  assert.deepEqual(at(plain, 'spec'), { containers: [{ ports: [{ containerPort: 80 }] }] });
  assert.equal(at(plain, 'metadata', 'annotations'), undefined);
});

/**
 * The stored bytes of a recorded object written straight from its validator's reads
 * (src/snapshot/stored-inputs/recorded-bytes.ts) must be the bytes of the projection path
 * (canonical JSON of the canonical form of `retainedForStorage`): for every document of the
 * fixtures, examples, golden cases and the synthetic mesh, and for hand-made edge cases; where the
 * projection path decides differently (an object reached twice, a frozen one) it must step aside.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { generateMesh } from '../../bench/synthetic.js';
import { parseDocuments, type RawDocument } from '../../src/inputs/parse.js';
import { buildInputSetRetention, retainedForStorage } from '../../src/inputs/retain.js';
import { recordedCanonicalBytes } from '../../src/snapshot/stored-inputs/recorded-bytes.js';
import { storedEntry, storedEntryOfRetention, storedRetainedEntry } from '../../src/snapshot/stored-inputs/index.js';
import { allYamlInputs } from '../helpers/paths.js';

const text = (b: Uint8Array | undefined): string | undefined => (b ? Buffer.from(b).toString('utf8') : undefined);

interface Tally {
  direct: number;
  projected: number;
}

/** Every document's bytes both ways; how many the direct writer wrote. */
function assertSameBytes(docs: readonly RawDocument[], label: string): Tally {
  const tally: Tally = { direct: 0, projected: 0 };
  buildInputSetRetention(docs, (doc, retention) => {
    const where = `${label} ${doc.file}#${doc.index}`;
    const reference = storedRetainedEntry(doc.object, retention.retained());
    const reads = retention.reads;
    const direct = reads ? recordedCanonicalBytes(doc.object, reads) : undefined;
    if (direct) {
      tally.direct++;
      assert.equal(text(direct), text(reference?.bytes), where);
    } else tally.projected++;
    // The pipeline's entry and the watcher's (one object at a time) are the reference's.
    const entry = storedEntryOfRetention(doc.object, retention);
    assert.equal(text(entry?.bytes), text(reference?.bytes), where);
    assert.equal(entry?.digest, reference?.digest, where);
  });
  for (const doc of docs) {
    const reference = storedRetainedEntry(doc.object, retainedForStorage(doc.object));
    const watched = storedEntry(doc.object);
    if (watched) assert.equal(text(watched.bytes), text(reference?.bytes), `${label} watcher ${doc.file}#${doc.index}`);
  }
  return tally;
}

test('recorded bytes: every document of the fixtures, examples and golden cases', () => {
  const files = allYamlInputs();
  assert.ok(files.length > 20, `${files.length} files`);
  let direct = 0;
  for (const f of files) direct += assertSameBytes(parseDocuments(readFileSync(f, 'utf8'), f).docs, f).direct;
  assert.ok(direct > 100, `only ${direct} documents written from their reads`);
});

test('recorded bytes: the synthetic mesh is written from its reads, all of it', () => {
  const { docs } = generateMesh({ services: 120 });
  const tally = assertSameBytes(docs, 'synthetic');
  assert.deepEqual(tally, { direct: docs.length, projected: 0 });
});

const meta = (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  name,
  namespace: 'default',
  ...extra,
});
const pod = (name: string, status: unknown, metaExtra: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: meta(name, metaExtra),
  spec: { containers: [{ name: 'app', ports: [{ containerPort: 80, name: 'http' }], env: [{ name: 'X' }] }] },
  status,
});

test('recorded bytes: Pod status, metadata and key edge cases', () => {
  const selector = JSON.parse('{"__proto__":"x","app":"é ü","z\\"q":"line\\nbreak"}') as unknown;
  const objects: Record<string, unknown>[] = [
    pod('only-other-conditions', { conditions: [{ type: 'Initialized', status: 'True' }] }),
    pod('empty-status', {}),
    pod('null-status', null),
    pod('ready-without-status', { conditions: [{ type: 'Ready' }, { type: 'PodScheduled', status: 'True' }] }),
    pod('ips', {
      podIP: '10.0.0.1',
      podIPs: [{ ip: '10.0.0.1', extra: { x: 1 } }, null, { other: 'y' }],
      phase: 'Running',
    }),
    pod('empty-ips', { podIPs: [], conditions: [] }),
    pod('labels-empty', { phase: 'Pending' }, { labels: {}, annotations: { a: 'b', note: 'n' }, uid: 'u' }),
    pod('labels', { phase: 'Running' }, { labels: { b: '2', a: '1', 'a.b/c': 'é' }, resourceVersion: '7' }),
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: meta('svc', { labels: { app: 'svc' } }),
      spec: { ports: [{ port: 80, name: 'http', targetPort: 'web' }], selector, clusterIP: '10.96.0.1' },
      status: { loadBalancer: {} },
    },
    {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'ns', labels: { 'istio-injection': 'enabled' }, annotations: { x: 'y' } },
    },
    {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'node-1', labels: { 'topology.kubernetes.io/zone': 'z1' } },
      status: { addresses: [{ address: '1.2.3.4' }] },
    },
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: meta('slice-1', { labels: { 'kubernetes.io/service-name': 'svc' } }),
      addressType: 'IPv4',
      ports: [{ port: 8080, name: 'http', protocol: 'TCP' }],
      endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready: true, serving: true }, zone: 'z1' }],
    },
    {
      apiVersion: 'networking.istio.io/v1',
      kind: 'VirtualService',
      metadata: meta('vs'),
      spec: {
        hosts: ['svc'],
        http: [
          {
            match: [{ uri: { prefix: '/a' }, headers: { 'x-k': { exact: 'v' } } }],
            route: [
              { destination: { host: 'svc', subset: 'v1', port: { number: 80 } }, weight: 90 },
              { destination: { host: 'svc', subset: 'v2' }, weight: 10 },
            ],
            timeout: '1.5s',
            retries: { attempts: 3, perTryTimeout: '0.5s' },
          },
        ],
      },
    },
    // A VirtualService keeps its creationTimestamp (the sidecar's choice among several for one host), a DestinationRule not.
    {
      apiVersion: 'networking.istio.io/v1',
      kind: 'VirtualService',
      metadata: meta('vs-aged', { creationTimestamp: '2024-01-01T00:00:00Z', uid: 'u', resourceVersion: '9' }),
      spec: { hosts: ['svc'], exportTo: ['.'], tcp: [{ route: [{ destination: { host: 'svc' } }] }] },
    },
    {
      apiVersion: 'networking.istio.io/v1',
      kind: 'VirtualService',
      metadata: meta('vs-empty-age', { creationTimestamp: '' }),
      spec: { hosts: ['svc'], tcp: [{ route: [{ destination: { host: 'svc' } }] }] },
    },
    {
      apiVersion: 'networking.istio.io/v1',
      kind: 'DestinationRule',
      metadata: meta('dr-aged', { creationTimestamp: '2024-01-01T00:00:00Z' }),
      spec: { host: 'svc' },
    },
    {
      apiVersion: 'networking.istio.io/v1',
      kind: 'DestinationRule',
      metadata: meta('dr'),
      spec: {
        host: 'svc',
        trafficPolicy: { connectionPool: { tcp: { maxConnections: 10 } }, loadBalancer: { simple: 'LEAST_REQUEST' } },
        subsets: [{ name: 'v1', labels: { version: 'v1' } }],
      },
    },
  ];
  const docs = objects.map((object, index) => ({ file: 'edge.yaml', index, object }));
  const tally = assertSameBytes(docs, 'edge');
  assert.deepEqual(tally, { direct: docs.length, projected: 0 });
  const stored = (name: string) => {
    const object = objects.find((o) => (o.metadata as { name: string }).name === name) as Record<string, unknown>;
    return text(storedRetainedEntry(object, retainedForStorage(object))?.bytes) ?? '';
  };
  assert.match(
    stored('vs-aged'),
    /"metadata":\{"creationTimestamp":"2024-01-01T00:00:00Z","name":"vs-aged","namespace":"default"\}/,
  );
  assert.match(stored('vs-empty-age'), /"metadata":\{"name":"vs-empty-age","namespace":"default"\}/);
  assert.match(stored('dr-aged'), /"metadata":\{"name":"dr-aged","namespace":"default"\}/);
});

test('recorded bytes: an object reached twice, a frozen one, a rejected one go the projection way', () => {
  const shared: Record<string, unknown> = { type: 'Ready', status: 'True', ports: [{ containerPort: 8080 }] };
  const aliased = pod('aliased', { conditions: [shared] });
  (aliased.spec as { containers: unknown[] }).containers = [shared];
  const labels = { app: 'a' };
  const aliasedMeta = pod('aliased-meta', { phase: 'Running' }, { labels, annotations: labels });
  const frozen = Object.freeze(pod('frozen', Object.freeze({ phase: 'Running' })));
  const frozenStatus = pod('frozen-status', Object.freeze({ phase: 'Running', podIP: '10.0.0.9' }));
  const rejected = { apiVersion: 'v1', kind: 'Service', metadata: meta('bad'), spec: { ports: 'nope' } };
  const docs = [aliased, aliasedMeta, frozen, frozenStatus, rejected].map((object, index) => ({
    file: 'odd.yaml',
    index,
    object,
  }));
  const tally = assertSameBytes(docs, 'odd');
  assert.deepEqual(tally, { direct: 0, projected: docs.length });
});

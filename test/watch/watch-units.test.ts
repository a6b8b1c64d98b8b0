import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bootstrapCommand, envoyBootstrap, grpcBootstrap } from '../../src/cli/commands/bootstrap.js';
import { canonicalObject, keyString, layerOf, storedObject } from '../../src/snapshot/stored-inputs/index.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { LastKnownGood } from '../../src/watch/last-known-good.js';
import { ObjectCache } from '../../src/watch/object-cache.js';
import { compileRequest } from '../../src/watch/round/request.js';
import { baseMesh, pod } from './watch-harness.js';
import { ManualClock } from '../../src/watch/clock.js';
import { Debouncer } from '../../src/watch/debounce.js';
import { ChangeLog } from '../../src/watch/provenance.js';
import { lastFieldManager } from '../../src/watch/field-manager.js';
import { startWatchHttp, watchHttpApp } from '../../src/watch/http.js';

test('debounce: fires after the quiet period, and at the latest after the maximum delay', async () => {
  const clock = new ManualClock();
  const fired: number[] = [];
  const d = new Debouncer({ quietMs: 100, maxMs: 1000, clock, fire: async (w) => void fired.push(w) });
  d.trigger();
  clock.advance(50);
  d.trigger();
  clock.advance(99);
  assert.deepEqual(fired, []);
  clock.advance(1);
  await d.idle();
  assert.deepEqual(fired, [150]);
  // A steady stream (every 50 ms) never goes quiet: the maximum delay fires it.
  for (let i = 0; i < 30; i++) {
    d.trigger();
    clock.advance(50);
    await d.idle();
  }
  assert.ok(fired.length >= 2 && fired[1] === 1000, JSON.stringify(fired));
  d.close();
});

test('stored inputs: noise is stripped, compiler inputs kept, layers split', () => {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'p',
      namespace: 'a',
      uid: 'u',
      resourceVersion: '9',
      managedFields: [{}],
      creationTimestamp: 'x',
      labels: { app: 'p' },
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}' },
    },
    spec: { containers: [] },
    status: {
      phase: 'Running',
      podIP: '1.2.3.4',
      hostIP: '5.6.7.8',
      startTime: 't',
      conditions: [
        { type: 'Ready', status: 'True', lastTransitionTime: 't' },
        { type: 'Initialized', status: 'True' },
      ],
    },
  };
  assert.deepEqual(canonicalObject(pod), {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'a', labels: { app: 'p' } },
    spec: { containers: [] },
    status: { phase: 'Running', podIP: '1.2.3.4', conditions: [{ type: 'Ready', status: 'True' }] },
  });
  const later = {
    ...pod,
    metadata: { ...pod.metadata, resourceVersion: '10' },
    status: { ...pod.status, startTime: 'u' },
  };
  assert.equal(storedObject(later)?.digest, storedObject(pod)?.digest);
  assert.equal(layerOf('Pod'), 'endpoints');
  assert.equal(layerOf('VirtualService'), 'config');
});

test('the last field manager is the newest managedFields entry; provenance keeps it, not for deletes', () => {
  const at = (manager: string, time?: string) => ({ manager, operation: 'Update', ...(time ? { time } : {}) });
  assert.equal(
    lastFieldManager({
      metadata: { managedFields: [at('helm', '2026-01-02T00:00:00Z'), at('kubectl', '2026-01-01T00:00:00Z')] },
    }),
    'helm',
  );
  assert.equal(
    lastFieldManager({ metadata: { managedFields: [at('old'), at('kubectl', '2026-01-01T00:00:00Z')] } }),
    'kubectl',
  );
  assert.equal(lastFieldManager({ metadata: { managedFields: [{ operation: 'Update' }, 'junk', at('')] } }), undefined);
  assert.equal(lastFieldManager({ metadata: {} }), undefined);
  const log = new ChangeLog();
  const k = (name: string) => ({ kind: 'VirtualService', namespace: 'a', name });
  log.record(k('x'), 'modified', '7', 'argocd-controller');
  log.record(k('y'), 'modified', '8', 'helm');
  log.record(k('y'), 'deleted', '9');
  assert.deepEqual(
    log.provenance().changes.map((c) => [c.name, c.change, c.manager]),
    [
      ['x', 'modified', 'argocd-controller'],
      ['y', 'deleted', undefined],
    ],
  );
});

test('provenance folds changes relative to the parent', () => {
  const log = new ChangeLog();
  const k = (name: string) => ({ kind: 'Service', namespace: 'a', name });
  log.record(k('x'), 'added', '1');
  log.record(k('x'), 'modified', '2');
  log.record(k('y'), 'added', '3');
  log.record(k('y'), 'deleted', '4');
  log.record(k('z'), 'deleted', '5');
  log.record(k('z'), 'added', '6');
  assert.deepEqual(log.provenance().changes, [
    { kind: 'Service', namespace: 'a', name: 'x', resourceVersion: '2', change: 'added' },
    { kind: 'Service', namespace: 'a', name: 'z', resourceVersion: '6', change: 'modified' },
  ]);
});

test('bootstrap: Envoy ADS to xds-grpc and a proxyless gRPC bootstrap', async () => {
  const input = {
    node: 'sidecar~10.0.0.1~web-1.shop~shop.svc.cluster.local',
    relay: 'relay.meshsnap:15010',
    namespace: 'shop',
    labels: { app: 'web' },
  };
  const envoy = envoyBootstrap(input) as {
    dynamic_resources: { ads_config: { grpc_services: { envoy_grpc: { cluster_name: string } }[] } };
    static_resources: { clusters: { name: string }[] };
  };
  assert.equal(envoy.dynamic_resources.ads_config.grpc_services[0]?.envoy_grpc.cluster_name, 'xds-grpc');
  assert.equal(envoy.static_resources.clusters[0]?.name, 'xds-grpc');
  const grpc = grpcBootstrap(input) as {
    xds_servers: { server_uri: string }[];
    node: { metadata: Record<string, unknown>; locality: unknown };
  };
  assert.equal(grpc.xds_servers[0]?.server_uri, 'relay.meshsnap:15010');
  assert.equal(grpc.node.metadata.GENERATOR, 'grpc');
  assert.ok(grpc.node.locality);
  await assert.rejects(bootstrapCommand(['--relay', 'nope']), /--node is required/);
});

/** What `bootstrap` prints: its JSON lines, parsed. */
async function bootstrapLines(args: string[]): Promise<Record<string, { node: unknown }>[]> {
  const lines: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string) => {
    lines.push(String(chunk));
    return true;
  }) as typeof process.stdout.write;
  try {
    assert.equal(await bootstrapCommand(args), 0);
  } finally {
    process.stdout.write = write;
  }
  return lines
    .join('')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, { node: unknown }>);
}

test('bootstrap --locality: both bootstraps carry the node locality the relay places the proxy by', async () => {
  const node = 'sidecar~10.0.0.1~web-1.shop~shop.svc.cluster.local';
  const [envoy, grpc] = (await bootstrapLines([
    '--node',
    node,
    '--locality',
    'us-east1/us-east1-b',
    '--insecure',
  ])) as Record<string, { node: { locality: unknown } }>[];
  assert.deepEqual(envoy?.envoy?.node.locality, { region: 'us-east1', zone: 'us-east1-b' });
  assert.deepEqual(grpc?.grpc?.node.locality, { region: 'us-east1', zone: 'us-east1-b', sub_zone: '' });
  await assert.rejects(bootstrapCommand(['--node', node, '--locality', '/zone-only']), /--locality: expected REGION/);
  await assert.rejects(bootstrapCommand(['--node', node, '--locality', 'a/b/c/d']), /--locality: expected REGION/);
});

test('bootstrap --type router: a gateway gets the Envoy bootstrap only; the type must agree with the node id', async () => {
  const router = 'router~10.244.0.20~istio-ingressgateway-0.istio-system~istio-system.svc.cluster.local';
  const printed = await bootstrapLines(['--type', 'router', '--node', router, '--labels', 'istio=ingressgateway']);
  assert.deepEqual(
    printed.map((p) => Object.keys(p)),
    [['envoy']],
  );
  assert.deepEqual(printed[0]?.envoy?.node, {
    id: router,
    cluster: router,
    metadata: { NAMESPACE: 'istio-system', LABELS: { istio: 'ingressgateway' } },
    locality: {},
  });
  await assert.rejects(
    bootstrapCommand(['--type', 'router', '--node', 'sidecar~10.0.0.1~web-1.shop~shop.svc.cluster.local']),
    /--type router: the node id says sidecar/,
  );
  await assert.rejects(bootstrapCommand(['--type', 'gateway', '--node', router]), /--type: expected sidecar or router/);
});

test('infra/k8s: the ClusterRole grants get/list/watch on exactly what the watcher reads', async () => {
  const { readFileSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { parseAllDocuments } = await import('yaml');
  const { ALL_RESOURCES, ENDPOINTS } = await import('../../src/watch/resources.js');
  const { REPO } = await import('../helpers/paths.js');
  const docs = parseAllDocuments(readFileSync(join(REPO, 'infra', 'k8s', 'rbac.yaml'), 'utf8')).map(
    (d) =>
      d.toJSON() as {
        kind: string;
        metadata: { name: string };
        rules?: { apiGroups: string[]; resources: string[]; verbs: string[]; resourceNames?: string[] }[];
      },
  );
  const granted = new Set<string>();
  for (const d of docs.filter((x) => x.kind === 'ClusterRole' || x.kind === 'Role')) {
    for (const r of d.rules ?? []) {
      assert.deepEqual(r.verbs, ['get', 'list', 'watch']);
      for (const g of r.apiGroups) for (const res of r.resources) granted.add(`${g}/${res}`);
    }
  }
  const read = new Set([...ALL_RESOURCES, ENDPOINTS].map((s) => `${s.group}/${s.plural}`));
  assert.deepEqual([...granted].sort(), [...read].sort());
});

test('watch HTTP: /healthz, /readyz 503 until synced then 200, /metrics, 405 and 404 (hono app over @hono/node-server)', async () => {
  let ready = false;
  const sources = {
    readiness: () => (ready ? { ready: true } : { ready: false, listing: ['Pod'] }),
    metrics: async () => ({ contentType: 'text/plain; version=0.0.4', body: 'meshsnap_watch_events_total 3\n' }),
  };
  const app = watchHttpApp(sources);
  assert.deepEqual(await (await app.request('/healthz')).json(), { ok: true });
  const notReady = await app.request('/readyz');
  assert.equal(notReady.status, 503);
  assert.deepEqual(await notReady.json(), { ready: false, listing: ['Pod'] });
  ready = true;
  assert.equal((await app.request('/readyz')).status, 200);
  assert.equal((await app.request('/healthz', { method: 'HEAD' })).status, 200);
  assert.equal((await app.request('/healthz', { method: 'POST' })).status, 405);
  assert.equal((await app.request('/nothing')).status, 404);
  const failing = watchHttpApp({ ...sources, metrics: () => Promise.reject(new Error('registry broke')) });
  assert.equal((await failing.request('/metrics')).status, 500);

  const server = await startWatchHttp(0, sources, '127.0.0.1');
  try {
    const res = await fetch(`http://127.0.0.1:${server.port}/metrics`, { signal: AbortSignal.timeout(5000) });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/plain; version=0.0.4');
    assert.equal(await res.text(), 'meshsnap_watch_events_total 3\n');
  } finally {
    await server.close();
  }
});

test('infra/k8s/write-status: update/patch on exactly the status subresources the writer writes, bound to the watcher; the overlay adds --write-status', async () => {
  const { readFileSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { parse, parseAllDocuments } = await import('yaml');
  const { GATEWAY_API_STATUS_RESOURCES } = await import('../../src/watch/resources.js');
  const { REPO } = await import('../helpers/paths.js');
  const dir = join(REPO, 'infra', 'k8s', 'write-status');
  const docs = parseAllDocuments(readFileSync(join(dir, 'status-rbac.yaml'), 'utf8')).map(
    (d) =>
      d.toJSON() as {
        kind: string;
        rules?: { apiGroups: string[]; resources: string[]; verbs: string[] }[];
        subjects?: { name: string; namespace: string }[];
      },
  );
  const granted: string[] = [];
  for (const r of docs.find((d) => d.kind === 'ClusterRole')?.rules ?? []) {
    assert.deepEqual(r.verbs, ['update', 'patch']);
    for (const g of r.apiGroups) for (const res of r.resources) granted.push(`${g}/${res}`);
  }
  assert.ok(
    granted.every((g) => g.endsWith('/status')),
    'status subresources only',
  );
  assert.deepEqual(granted.sort(), GATEWAY_API_STATUS_RESOURCES.map((s) => `${s.group}/${s.plural}/status`).sort());
  assert.deepEqual(docs.find((d) => d.kind === 'ClusterRoleBinding')?.subjects, [
    { kind: 'ServiceAccount', name: 'meshsnap-watch', namespace: 'meshsnap-system' },
  ]);
  const kustomization = parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as {
    resources: string[];
    patches: { patch: string }[];
  };
  assert.deepEqual(kustomization.resources, ['../', 'status-rbac.yaml']);
  assert.deepEqual(parse(kustomization.patches[0]?.patch ?? ''), [
    { op: 'add', path: '/spec/template/spec/containers/0/args/-', value: '--write-status' },
  ]);
});

test("a full round's request lists the cache's objects in key order, as sorting by keyString gives", () => {
  const cache = new ObjectCache(nodeSha256Hex);
  const mesh = baseMesh();
  for (const o of [...mesh].reverse()) cache.upsert(o);
  for (let i = 0; i < 40; i++) cache.upsert(pod(`p-${(i * 7) % 40}`, `app-${i % 3}`, 'v1', `10.2.0.${i}`));
  const objects = compileRequest(new Set(), '', cache, new LastKnownGood()).objects;
  const expected = [...cache.values()].map((o) => keyString(o.key)).sort();
  assert.equal(objects.length, expected.length);
  assert.deepEqual(
    objects.map((o) => keyString(o.key)),
    expected,
  );
});

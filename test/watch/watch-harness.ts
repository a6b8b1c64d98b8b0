/**
 * Test harness for the watcher: a fake API server holding a small mesh, a temp LocalStore, a
 * ManualClock for the debounce (tests never sleep through it) and real, short timers for
 * informer restarts. `settle()` waits until the watcher has seen the events, then fires the
 * debounce and waits for the round.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { loadStoredInputs } from '../../src/snapshot/stored-inputs/index.js';
import { compileDocuments } from '../../src/pipeline.js';
import { classifyNode, resourcesForClass } from '../../src/snapshot/classify.js';
import type { VersionRecord } from '../../src/snapshot/manifest.js';
import { LocalStore, nodeSha256Hex } from '../../src/snapshot/store/local.js';
import type { SnapshotStore } from '../../src/snapshot/store/store.js';
import { ManualClock } from '../../src/watch/clock.js';
import type { SnapshotCompiler } from '../../src/watch/compiler.js';
import { Watcher, type WriteStatusOptions } from '../../src/watch/watcher.js';
import { resourceToJson } from '../../src/xds/json.js';
import { XDS_TYPE_NAME, XDS_TYPES, type XdsType } from '../../src/xds/type-urls.js';
import { startFakeApiServer, type FakeApiServer, type FakeApiServerOptions } from '../helpers/fake-apiserver/server.js';
import { until } from '../helpers/fake-apiserver/wait.js';

type Obj = Record<string, unknown> & {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; [k: string]: unknown };
};

export const ns = (name: string): Obj => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
export const node = (name: string, zone: string): Obj => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name, labels: { 'topology.kubernetes.io/region': 'r1', 'topology.kubernetes.io/zone': zone } },
  status: { conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: '2026-01-01T00:00:00Z' }] },
});
export const service = (name: string, port = 9080): Obj => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: 'default', labels: { app: name } },
  spec: {
    selector: { app: name },
    clusterIP: `10.96.0.${10 + name.length}`,
    ports: [{ name: 'http', port, targetPort: port, protocol: 'TCP' }],
  },
});
export const pod = (name: string, app: string, version: string, ip: string): Obj => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', labels: { app, version } },
  spec: { nodeName: 'node-a', containers: [{ name: app, image: 'x', ports: [{ containerPort: 9080, name: 'http' }] }] },
  status: { phase: 'Running', podIP: ip, podIPs: [{ ip }], conditions: [{ type: 'Ready', status: 'True' }] },
});
export const slice = (svc: string, endpoints: { ip: string; pod: string }[], port = 9080): Obj => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: { name: `${svc}-abc`, namespace: 'default', labels: { 'kubernetes.io/service-name': svc } },
  addressType: 'IPv4',
  ports: [{ name: 'http', port, protocol: 'TCP' }],
  endpoints: endpoints.map((e) => ({
    addresses: [e.ip],
    conditions: { ready: true },
    nodeName: 'node-a',
    targetRef: { kind: 'Pod', name: e.pod, namespace: 'default' },
  })),
});
export const destinationRule = (host: string): Obj => ({
  apiVersion: 'networking.istio.io/v1',
  kind: 'DestinationRule',
  metadata: { name: host, namespace: 'default' },
  spec: {
    host,
    subsets: [
      { name: 'v1', labels: { version: 'v1' } },
      { name: 'v2', labels: { version: 'v2' } },
    ],
  },
});
export const virtualService = (host: string, weights: [number, number]): Obj => ({
  apiVersion: 'networking.istio.io/v1',
  kind: 'VirtualService',
  metadata: { name: host, namespace: 'default' },
  spec: {
    hosts: [host],
    http: [
      {
        route: [
          { destination: { host, subset: 'v1' }, weight: weights[0] },
          { destination: { host, subset: 'v2' }, weight: weights[1] },
        ],
      },
    ],
  },
});
export const meshConfigMap = (policy: 'ALLOW_ANY' | 'REGISTRY_ONLY'): Obj => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'istio', namespace: 'istio-system' },
  data: { mesh: `outboundTrafficPolicy:\n  mode: ${policy}\n` },
});

/** A small mesh: productpage → reviews (v1, v2), one node. */
export function baseMesh(): Obj[] {
  return [
    ns('default'),
    ns('istio-system'),
    node('node-a', 'z1'),
    service('reviews'),
    service('productpage'),
    pod('reviews-v1-1', 'reviews', 'v1', '10.244.0.11'),
    pod('reviews-v2-1', 'reviews', 'v2', '10.244.0.12'),
    pod('productpage-v1-1', 'productpage', 'v1', '10.244.0.20'),
    slice('reviews', [
      { ip: '10.244.0.11', pod: 'reviews-v1-1' },
      { ip: '10.244.0.12', pod: 'reviews-v2-1' },
    ]),
    slice('productpage', [{ ip: '10.244.0.20', pod: 'productpage-v1-1' }]),
    meshConfigMap('ALLOW_ANY'),
  ];
}

export const PRODUCTPAGE_NODE = {
  id: 'sidecar~10.244.0.20~productpage-v1-1.default~default.svc.cluster.local',
  metadata: { NAMESPACE: 'default', LABELS: { app: 'productpage', version: 'v1' }, INSTANCE_IPS: '10.244.0.20' },
};

export interface Harness {
  readonly server: FakeApiServer;
  readonly store: LocalStore;
  readonly clock: ManualClock;
  readonly watcher: Watcher;
  readonly logs: Record<string, unknown>[];
  /** Waits until `n` more events were applied (since the last settle), then fires the debounce and waits for the round. */
  settle(events?: number): Promise<void>;
  head(): Promise<VersionRecord | null>;
  versions(): Promise<number>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  readonly server?: FakeApiServerOptions;
  readonly compiler?: SnapshotCompiler;
  readonly namespaces?: readonly string[];
  /** Called before the watcher starts (fault injection). */
  readonly beforeStart?: (server: FakeApiServer) => void;
  /** Do not wait for the first publish. */
  readonly noInitialSettle?: boolean;
  /** `--write-status`. */
  readonly writeStatus?: WriteStatusOptions;
  /** Wall clock (version records, status lastTransitionTime). */
  readonly now?: () => Date;
}

export async function startHarness(opts: HarnessOptions = {}): Promise<Harness> {
  const server = await startFakeApiServer({ objects: baseMesh(), bookmarkIntervalMs: 0, ...opts.server });
  const dir = await mkdtemp(join(tmpdir(), 'meshsnap-watch-'));
  const store = new LocalStore(dir);
  const clock = new ManualClock(1_000_000);
  const kc = new KubeConfig();
  kc.loadFromString(server.kubeconfig());
  const logs: Record<string, unknown>[] = [];
  const watcher = new Watcher({
    kubeConfig: kc,
    store,
    channel: 'main',
    clock,
    backoff: { initialMs: 20, maxMs: 200 },
    crdPollMs: 50,
    hasher: nodeSha256Hex,
    log: (e) => logs.push(e),
    ...(opts.compiler ? { compiler: opts.compiler } : {}),
    ...(opts.namespaces ? { namespaces: opts.namespaces } : {}),
    ...(opts.writeStatus ? { writeStatus: opts.writeStatus } : {}),
    ...(opts.now ? { now: opts.now } : {}),
  });
  let seen = 0;
  const h: Harness = {
    server,
    store,
    clock,
    watcher,
    logs,
    async settle(events = 0) {
      await until(
        () => watcher.eventsSeen >= seen + events,
        10_000,
        `${events} events (seen ${watcher.eventsSeen - seen})`,
      );
      await until(() => watcher.synced, 10_000, 'sync');
      seen = watcher.eventsSeen;
      clock.advance(100);
      await watcher.idle();
      // A round that was already running let later events start another one: finish that too.
      clock.advance(100);
      await watcher.idle();
      const failed = logs.find((l) => l.level === 'error');
      if (failed) throw new Error(`watcher: ${JSON.stringify(failed)}`);
    },
    async head() {
      const head = await store.readChannel('main');
      return head ? store.getVersion('main', head.version) : null;
    },
    async versions() {
      return (await store.listVersions('main')).length;
    },
    async close() {
      await watcher.stop();
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
  opts.beforeStart?.(server);
  await watcher.start();
  if (!opts.noInitialSettle) await h.settle();
  return h;
}

/** What a node is served by a stored version: per type, name → config_dump-style JSON. */
export async function servedFromStore(
  store: LocalStore,
  record: VersionRecord,
  n: { id: string; metadata: Record<string, unknown> } = PRODUCTPAGE_NODE,
) {
  const content = await store.getSnapshot(record.digest);
  if (!content) throw new Error(`snapshot ${record.digest} missing`);
  const placed = classifyNode(content, n);
  if (!placed.ok) throw new Error(placed.reason);
  const table = resourcesForClass(content, placed.classId);
  if (!table) throw new Error(`no class ${placed.classId}`);
  const out = {} as Record<XdsType, Map<string, Record<string, unknown>>>;
  for (const type of XDS_TYPES) {
    out[type] = new Map();
    for (const [name, digest] of table[type]) {
      const bytes = await store.getObject(digest);
      if (!bytes) throw new Error(`object ${digest} missing`);
      out[type].set(name, resourceToJson(XDS_TYPE_NAME[type], bytes) as Record<string, unknown>);
    }
  }
  return out;
}

/** The head, asserted to be what a full compile of its own stored inputs gives (`what` names the step). */
export async function headRecompiled(h: Harness, what: string): Promise<VersionRecord> {
  const head = await h.head();
  assert.ok(head, what);
  assert.equal(
    await recompileStored(h.store, head),
    head.digest,
    `${what}: stored inputs recompile to the served digest`,
  );
  return head;
}

/** The digest a full, from-scratch compile of a version's stored inputs gives. */
export async function recompileStored(store: LocalStore, record: VersionRecord): Promise<string> {
  if (!record.inputs) throw new Error(`version ${record.version} has no stored inputs`);
  const docs = await loadStoredInputs(store, record.inputs);
  return compileDocuments(docs, { hasher: nodeSha256Hex }).snapshot.digest;
}

/** Endpoint IPs of one ClusterLoadAssignment. */
export function endpointIps(cla: Record<string, unknown> | undefined): string[] {
  const out: string[] = [];
  for (const group of (cla?.endpoints ?? []) as {
    lb_endpoints?: { endpoint?: { address?: { socket_address?: { address?: string } } } }[];
  }[]) {
    for (const e of group.lb_endpoints ?? []) {
      const ip = e.endpoint?.address?.socket_address?.address;
      if (ip) out.push(ip);
    }
  }
  return out.sort();
}

/**
 * A watcher fed by hand on channel `main` (no API server, clocks that never move): rounds run by
 * compileNow. `now` fixes the time its version records carry (two watchers then write the same
 * bytes); `collect` is the full collection it runs in its full rounds (WatcherOptions.collect).
 */
export const handFedWatcher = (store: SnapshotStore, now?: () => Date, collect?: () => void): Watcher =>
  new Watcher({
    kubeConfig: new KubeConfig(),
    store,
    channel: 'main',
    clock: new ManualClock(),
    timerClock: new ManualClock(),
    hasher: nodeSha256Hex,
    ...(now ? { now } : {}),
    ...(collect ? { collect } : {}),
  });

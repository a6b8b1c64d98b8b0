/**
 * A watcher on a REAL kube-apiserver for tests (../shared/tools/kube-local): a temp LocalStore, a
 * ManualClock for the debounce, and `until(predicate)`, which fires debounced rounds until the head
 * satisfies the predicate. Tests share that one API server and its cluster-scoped objects (another
 * test's Namespace is an event here too, and may publish a version), so they wait for what they
 * expect to see, never for a number of events or an exact version number.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CoreV1Api,
  KubernetesObjectApi,
  type KubeConfig,
  type KubernetesObject,
  type V1Pod,
} from '@kubernetes/client-node';
import type { VersionRecord } from '../../src/snapshot/manifest.js';
import { LocalStore, nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { ManualClock } from '../../src/watch/clock.js';
import { Watcher, type WriteStatusOptions } from '../../src/watch/watcher.js';

export interface RealWatch {
  readonly store: LocalStore;
  readonly watcher: Watcher;
  /** Fires rounds until the head satisfies `ready` (or fails after `timeoutMs`); returns that head. */
  until(
    what: string,
    ready: (head: VersionRecord) => boolean | Promise<boolean>,
    timeoutMs?: number,
  ): Promise<VersionRecord>;
  close(): Promise<void>;
}

export async function startRealWatch(
  kubeConfig: KubeConfig,
  namespace: string,
  opts: { readonly writeStatus?: WriteStatusOptions } = {},
): Promise<RealWatch> {
  const dir = await mkdtemp(join(tmpdir(), 'meshsnap-watch-real-'));
  const store = new LocalStore(dir);
  const clock = new ManualClock(1_000_000);
  const logs: Record<string, unknown>[] = [];
  const watcher = new Watcher({
    kubeConfig,
    store,
    channel: 'main',
    clock,
    backoff: { initialMs: 50, maxMs: 500 },
    crdPollMs: 200,
    hasher: nodeSha256Hex,
    log: (e) => logs.push(e),
    namespaces: [namespace],
    ...(opts.writeStatus ? { writeStatus: opts.writeStatus } : {}),
  });
  await watcher.start();
  const head = async (): Promise<VersionRecord | null> => {
    const h = await store.readChannel('main');
    return h ? store.getVersion('main', h.version) : null;
  };
  return {
    store,
    watcher,
    async until(what, ready, timeoutMs = 30_000) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        if (watcher.synced) {
          clock.advance(100);
          await watcher.idle();
        }
        const failed = logs.find((l) => l.level === 'error');
        if (failed) throw new Error(`watcher: ${JSON.stringify(failed)}`);
        const h = await head();
        if (h && (await ready(h))) return h;
        if (Date.now() > end)
          throw new Error(`no head with ${what} within ${timeoutMs} ms (head: ${h?.version ?? 'none'})`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async close() {
      await watcher.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A namespace of a test on the real API server, and the objects the test created in it. */
export interface RealNamespace {
  readonly objects: KubernetesObjectApi;
  create<T extends KubernetesObject>(o: T): Promise<T>;
  /** A pod as if it ran: created, then its status written (nothing schedules pods on kube-local). */
  runningPod(pod: KubernetesObject, ip: string): Promise<void>;
  /** Deletes what the test created, one by one (kube-local runs no namespace controller: a deleted namespace stays Terminating). */
  cleanUp(): Promise<void>;
}

export async function realNamespace(kc: KubeConfig, name: string): Promise<RealNamespace> {
  const objects = KubernetesObjectApi.makeApiClient(kc);
  const core = kc.makeApiClient(CoreV1Api);
  const created: KubernetesObject[] = [];
  const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name } };
  await objects.create(ns);
  const create = async <T extends KubernetesObject>(o: T): Promise<T> => {
    const out = (await objects.create(o)) as T;
    created.push(o);
    return out;
  };
  return {
    objects,
    create,
    async runningPod(pod, ip) {
      await create(pod);
      const podName = pod.metadata?.name ?? '';
      const current = await core.readNamespacedPod({ name: podName, namespace: name });
      const status = { phase: 'Running', podIP: ip, podIPs: [{ ip }], conditions: [{ type: 'Ready', status: 'True' }] };
      await core.replaceNamespacedPodStatus({ name: podName, namespace: name, body: { ...current, status } as V1Pod });
    },
    async cleanUp() {
      for (const o of created.reverse()) await objects.delete(o).catch(() => undefined);
      await objects.delete(ns).catch(() => undefined);
      // No namespace controller runs beside kube-local's API server: a deleted namespace would stay
      // Terminating for good, and every later watcher would see it (hundreds after a few runs). Its
      // objects are deleted above, so its finalizer is cleared as the namespace controller would.
      const body = { apiVersion: 'v1', kind: 'Namespace', metadata: { name }, spec: { finalizers: [] } };
      await core.replaceNamespaceFinalize({ name, body }).catch(() => undefined);
    },
  };
}

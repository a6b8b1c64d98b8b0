/**
 * Test harness around client-node informers pointed at the fake server: builds a `ListWatch`
 * exactly as `makeInformer` does (Watch + list function + path), but with an injectable reconnect
 * delay so tests never sleep through client-node's 1 s → 30 s backoff, and records what the
 * informer reports (add/update/delete, connect, error).
 */
import {
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  type KubernetesObject,
  ListWatch,
  Watch,
} from '@kubernetes/client-node';

export function kubeConfigFor(kubeconfigText: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfigText);
  return kc;
}

/** A Watch that asks for BOOKMARKs, which ListWatch itself never does. */
export class BookmarkWatch extends Watch {
  override watch(
    path: string,
    queryParams: Record<string, string | number | boolean | undefined>,
    callback: (phase: string, apiObj: unknown, watchObj?: unknown) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    return super.watch(path, { ...queryParams, allowWatchBookmarks: true }, callback, done);
  }
}

export interface Recorded {
  readonly informer: ListWatch<KubernetesObject>;
  /** "add ns/name", "update ns/name", "delete ns/name" in arrival order. */
  readonly events: string[];
  readonly errors: unknown[];
  /** How many times the informer (re)connected: each one lists when it has no resourceVersion. */
  connects: number;
  /** Reconnect delays client-node asked for (not slept). */
  readonly delays: number[];
}

export type ListFn = () => Promise<{ metadata?: { resourceVersion?: string }; items: KubernetesObject[] }>;

/** List functions as a watcher writes them: typed APIs for built-in kinds, CustomObjectsApi for CRDs. */
export function listFnFor(kc: KubeConfig, path: string): ListFn {
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const crd = /^\/apis\/([^/]+)\/([^/]+)\/(?:namespaces\/([^/]+)\/)?([^/]+)$/.exec(path);
  if (crd) {
    const [, group, version, namespace, plural] = crd as unknown as [
      string,
      string,
      string,
      string | undefined,
      string,
    ];
    return () =>
      namespace
        ? custom.listNamespacedCustomObject({ group, version, namespace, plural })
        : custom.listClusterCustomObject({ group, version, plural });
  }
  const lists: Record<string, ListFn> = {
    '/api/v1/pods': () => core.listPodForAllNamespaces(),
    '/api/v1/services': () => core.listServiceForAllNamespaces(),
    '/api/v1/endpoints': () => core.listEndpointsForAllNamespaces(),
    '/api/v1/namespaces': () => core.listNamespace(),
    '/api/v1/nodes': () => core.listNode(),
    '/api/v1/configmaps': () => core.listConfigMapForAllNamespaces(),
  };
  const fn = lists[path];
  if (!fn) throw new Error(`informers.ts: no list function for ${path}`);
  return fn;
}

export function recordInformer(
  kc: KubeConfig,
  path: string,
  opts: { bookmarks?: boolean; start?: boolean } = {},
): Recorded {
  const delays: number[] = [];
  const watch = opts.bookmarks ? new BookmarkWatch(kc) : new Watch(kc);
  const informer = new ListWatch<KubernetesObject>(path, watch, listFnFor(kc, path), false, undefined, undefined, {
    delayFn: async (ms) => {
      delays.push(ms);
    },
  });
  const rec: Recorded = { informer, events: [], errors: [], connects: 0, delays };
  const id = (o: KubernetesObject) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
  informer.on('add', (o) => rec.events.push(`add ${id(o)}`));
  informer.on('update', (o) => rec.events.push(`update ${id(o)}`));
  informer.on('delete', (o) => rec.events.push(`delete ${id(o)}`));
  informer.on('connect', () => rec.connects++);
  informer.on('error', (e) => rec.errors.push(e));
  if (opts.start !== false) void informer.start();
  return rec;
}

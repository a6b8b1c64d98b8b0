/**
 * The end-to-end benchmark's API server side: where a change is written, and when it counts as
 * accepted. The real kube-apiserver (a kubeconfig that answers) gets objects created or replaced
 * through client-node; on a 1.20 server, which serves no discovery.k8s.io/v1, EndpointSlices are
 * written as the core Endpoints the watcher then reads, and pods get their status written (nothing
 * runs them there).
 */
import { kubeGet, KubeHttpError } from '../src/watch/kube-http.js';
import { CoreV1Api, KubeConfig, KubernetesObjectApi, type KubernetesObject, type V1Pod } from '@kubernetes/client-node';

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; resourceVersion?: string };
  [key: string]: unknown;
}

export interface ApiWriter {
  readonly kind: 'fake' | 'real';
  /** A kubeconfig (text) for `meshsnap watch`. */
  readonly kubeconfig: string;
  /** Creates or replaces; resolves once the API server accepted it. */
  write(o: KubeObject): Promise<void>;
  close(): Promise<void>;
}

interface SliceShape {
  metadata: { namespace?: string; labels?: Record<string, string> };
  ports?: { name?: string; port: number; protocol?: string }[];
  endpoints?: { addresses: string[]; targetRef?: unknown }[];
}

/** An EndpointSlice as the core Endpoints object a 1.20 server's controller would have written. */
function asEndpoints(slice: KubeObject): KubeObject {
  const s = slice as unknown as SliceShape;
  const service = s.metadata.labels?.['kubernetes.io/service-name'] ?? '';
  return {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name: service, ...(s.metadata.namespace ? { namespace: s.metadata.namespace } : {}) },
    subsets: [
      {
        addresses: (s.endpoints ?? []).flatMap((e) =>
          e.addresses.map((ip) => ({ ip, ...(e.targetRef ? { targetRef: e.targetRef } : {}) })),
        ),
        ports: s.ports ?? [],
      },
    ],
  };
}

/** A real server allocates cluster IPs itself (the synthetic ones may collide with its own). */
function allocatedIp(service: KubeObject): KubeObject {
  const spec = { ...(service.spec as Record<string, unknown>) };
  delete spec.clusterIP;
  delete spec.clusterIPs;
  return { ...service, spec };
}

const isConflict = (err: unknown): boolean => (err as { code?: number }).code === 409;

export async function realApiWriter(kubeconfigPath: string): Promise<ApiWriter | { skip: string }> {
  const kc = new KubeConfig();
  try {
    kc.loadFromFile(kubeconfigPath);
  } catch (err) {
    return { skip: `kubeconfig ${kubeconfigPath}: ${(err as Error).message}` };
  }
  const objects = KubernetesObjectApi.makeApiClient(kc);
  const core = kc.makeApiClient(CoreV1Api);
  let slicesServed: boolean;
  try {
    slicesServed = await kubeGet(kc, '/apis/discovery.k8s.io/v1', {}, 3000).then(
      () => true,
      (err: unknown) => (err instanceof KubeHttpError && err.statusCode === 404 ? false : Promise.reject(err)),
    );
  } catch (err) {
    return { skip: `no real kube-apiserver at ${kc.getCurrentCluster()?.server}: ${(err as Error).message}` };
  }
  const written = new Map<string, KubernetesObject>();

  const upsert = async (o: KubeObject): Promise<KubernetesObject> => {
    try {
      return await objects.create(o);
    } catch (err) {
      if (!isConflict(err)) throw err;
      const current = await objects.read({
        apiVersion: o.apiVersion,
        kind: o.kind,
        metadata: { name: o.metadata.name, ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}) },
      });
      return objects.replace({ ...o, metadata: { ...o.metadata, resourceVersion: current.metadata?.resourceVersion } });
    }
  };

  return {
    kind: 'real',
    kubeconfig: kc.exportConfig(),
    async write(o) {
      const obj =
        o.kind === 'EndpointSlice' && !slicesServed ? asEndpoints(o) : o.kind === 'Service' ? allocatedIp(o) : o;
      const { status, ...spec } = obj as KubeObject & { status?: unknown };
      const created = await upsert(obj.kind === 'Pod' ? (spec as KubeObject) : obj);
      written.set(`${obj.apiVersion}/${obj.kind}/${obj.metadata.namespace ?? ''}/${obj.metadata.name}`, created);
      if (obj.kind === 'Pod' && status) {
        await core.replaceNamespacedPodStatus({
          name: obj.metadata.name,
          namespace: obj.metadata.namespace ?? 'default',
          body: { ...(created as V1Pod), status: status as V1Pod['status'] },
        });
      }
    },
    async close() {
      // Namespaces are kept (kube-local runs no namespace controller); their objects are removed one by one.
      for (const o of [...written.values()].reverse())
        if (o.kind !== 'Namespace') await objects.delete(o).catch(() => undefined);
    },
  };
}

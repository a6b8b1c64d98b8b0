/**
 * Discovery: which version of each resource the cluster serves, so the watcher reads Istio config
 * in v1 where it can and v1beta1/v1alpha3 where it must, and falls back from EndpointSlices to
 * core Endpoints. A version is served when /apis/GROUP/VERSION lists the resource. Discovery is
 * open to every authenticated user, so the watcher needs no RBAC on CustomResourceDefinitions to
 * notice a CRD being installed: it asks discovery again.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { kubeGet, KubeHttpError } from './kube-http.js';
import type { ResourceSpec } from './resources.js';

export type Discover = (spec: ResourceSpec) => Promise<string | undefined>;

/**
 * The first of the spec's versions the server serves it in, or undefined when none is. Throws on
 * other errors (the caller retries). Kinds of one group-version asked about at the same time share
 * one request (the watcher asks about every kind at once; the Gateway API's seven kinds are two
 * group-versions); nothing is kept once it is answered, so a CRD installed later is seen.
 */
export function makeDiscovery(kc: KubeConfig): Discover {
  const inflight = new Map<string, Promise<unknown>>();
  const get = (path: string): Promise<unknown> => {
    let p = inflight.get(path);
    if (!p) {
      p = kubeGet(kc, path).finally(() => inflight.delete(path));
      inflight.set(path, p);
    }
    return p;
  };
  return async (spec) => {
    for (const version of spec.versions) {
      const path = spec.group === '' ? `/api/${version}` : `/apis/${spec.group}/${version}`;
      let doc: unknown;
      try {
        doc = await get(path);
      } catch (err) {
        if (err instanceof KubeHttpError && err.statusCode === 404) continue;
        throw err;
      }
      const resources = (doc as { resources?: unknown }).resources;
      if (Array.isArray(resources) && resources.some((r) => (r as { name?: unknown }).name === spec.plural))
        return version;
    }
    return undefined;
  };
}

/** The status writer's API server: GET an object, PUT its status subresource (kube-http.ts). */
import type { KubeConfig } from '@kubernetes/client-node';
import { kubeRequest, KubeHttpError } from '../kube-http.js';
import { GATEWAY_API_STATUS_RESOURCES, objectPath } from '../resources.js';
import type { Json } from './merge.js';
import type { StatusClient } from './writer.js';

export function kubeStatusClient(kc: KubeConfig, timeoutMs = 30_000): StatusClient {
  return {
    async get(path) {
      try {
        return (await kubeRequest(kc, 'GET', path, { timeoutMs })) as Json;
      } catch (err) {
        if (err instanceof KubeHttpError && err.statusCode === 404) return undefined;
        throw err;
      }
    },
    async replaceStatus(path, object) {
      return (await kubeRequest(kc, 'PUT', `${path}/status`, { body: object, timeoutMs })) as Json;
    },
  };
}

/** The object path of a Gateway API kind read in `apiVersion` (undefined for any other kind). */
export function statusObjectPath(
  kind: string,
  apiVersion: string,
  namespace: string,
  name: string,
): string | undefined {
  const spec = GATEWAY_API_STATUS_RESOURCES.find((r) => r.kind === kind);
  const slash = apiVersion.indexOf('/');
  if (!spec || slash < 0 || apiVersion.slice(0, slash) !== spec.group) return undefined;
  return objectPath(spec, apiVersion.slice(slash + 1), namespace, name);
}

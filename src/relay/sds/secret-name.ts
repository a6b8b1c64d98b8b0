/**
 * SDS resource names the relay serves, after istiod's credentials.ParseResourceName
 * (pilot/pkg/model/credentials/resource.go), `kubernetes://` form only:
 * `kubernetes://<name>` (the proxy's own namespace) or `kubernetes://<namespace>/<name>`; a name
 * ending in `-cacert` asks for the CA certificate only. Other forms (`kubernetes-gateway://`,
 * `configmap://`, `builtin://`, file paths) are not served by the relay.
 */
export const KUBERNETES_SECRET_PREFIX = 'kubernetes://';
export const CA_SUFFIX = '-cacert';

export interface SecretRef {
  /** The SDS resource name as requested. */
  readonly resourceName: string;
  readonly namespace: string;
  /** The Kubernetes Secret name as written (with a `-cacert` suffix when it is a CA request). */
  readonly name: string;
  readonly caOnly: boolean;
}

export function parseSecretName(resourceName: string, proxyNamespace: string): SecretRef | undefined {
  if (!resourceName.startsWith(KUBERNETES_SECRET_PREFIX)) return undefined;
  const split = resourceName.slice(KUBERNETES_SECRET_PREFIX.length).split('/');
  const [namespace, name] = split.length > 1 ? [split[0] ?? '', split[1] ?? ''] : [proxyNamespace, split[0] ?? ''];
  if (!namespace || !name) return undefined;
  return { resourceName, namespace, name, caOnly: name.endsWith(CA_SUFFIX) };
}

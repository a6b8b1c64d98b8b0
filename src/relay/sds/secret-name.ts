/**
 * SDS resource names the relay serves, after istiod's credentials.ParseResourceName
 * (pilot/pkg/model/credentials/resource.go):
 * - `kubernetes://<name>` (the proxy's own namespace) or `kubernetes://<namespace>/<name>`: an Istio
 *   Gateway's credentialName;
 * - `kubernetes-gateway://<namespace>/<name>` (namespace required): a Gateway API listener's
 *   certificateRef, as the compile names it.
 * A name ending in `-cacert` asks for the CA certificate only. Other forms (`configmap://`,
 * `builtin://`, file paths) are not served by the relay.
 */
export const KUBERNETES_SECRET_PREFIX = 'kubernetes://';
export const KUBERNETES_GATEWAY_SECRET_PREFIX = 'kubernetes-gateway://';
export const CA_SUFFIX = '-cacert';

export interface SecretRef {
  /** The SDS resource name as requested. */
  readonly resourceName: string;
  readonly namespace: string;
  /** The Kubernetes Secret name as written (with a `-cacert` suffix when it is a CA request). */
  readonly name: string;
  readonly caOnly: boolean;
}

/** A `kubernetes://` name; undefined for any other form. */
export function parseSecretName(resourceName: string, proxyNamespace: string): SecretRef | undefined {
  if (!resourceName.startsWith(KUBERNETES_SECRET_PREFIX)) return undefined;
  const split = resourceName.slice(KUBERNETES_SECRET_PREFIX.length).split('/');
  const [namespace, name] = split.length > 1 ? [split[0] ?? '', split[1] ?? ''] : [proxyNamespace, split[0] ?? ''];
  return secretRef(resourceName, namespace, name);
}

/** A `kubernetes-gateway://<namespace>/<name>` name; undefined for any other form, or without a namespace. */
export function parseGatewaySecretName(resourceName: string): SecretRef | undefined {
  if (!resourceName.startsWith(KUBERNETES_GATEWAY_SECRET_PREFIX)) return undefined;
  const [namespace, name] = resourceName.slice(KUBERNETES_GATEWAY_SECRET_PREFIX.length).split('/');
  return secretRef(resourceName, namespace ?? '', name ?? '');
}

function secretRef(resourceName: string, namespace: string, name: string): SecretRef | undefined {
  if (!namespace || !name) return undefined;
  return { resourceName, namespace, name, caOnly: name.endsWith(CA_SUFFIX) };
}

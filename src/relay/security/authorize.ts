/**
 * Authorization of a proxy's claimed node against its authenticated identity, after istiod's
 * checkConnectionIdentity (pilot/pkg/xds/auth.go): the namespace the node claims must be the
 * identity's, and a SERVICE_ACCOUNT in the node metadata must be the identity's service account.
 *
 * Stricter than istiod in one way: istiod compares one namespace (metadata NAMESPACE, else the
 * id's); here every namespace the node names — the id's `<pod>.<ns>`, its `<ns>.svc.<domain>` and
 * the metadata NAMESPACE — must be the identity's, so no part of the node can point elsewhere.
 */
import type { ProxyIdentity } from './identity.js';

export type NodeCheck = { readonly ok: true } | { readonly ok: false; readonly reason: string };

export function checkNodeIdentity(
  nodeId: string,
  metadata: Readonly<Record<string, unknown>>,
  identity: ProxyIdentity,
): NodeCheck {
  const claimed = claimedNamespaces(nodeId, metadata);
  if (claimed.length === 0)
    return { ok: false, reason: `node ${nodeId} names no namespace; identity ${identity.principal}` };
  const other = claimed.find((c) => c.namespace !== identity.namespace);
  if (other)
    return {
      ok: false,
      reason: `node ${nodeId} claims namespace ${JSON.stringify(other.namespace)} (${other.where}) but is authenticated as ${identity.principal}`,
    };
  const sa = metadata.SERVICE_ACCOUNT;
  if (typeof sa === 'string' && sa !== '' && sa !== identity.serviceAccount)
    return {
      ok: false,
      reason: `node ${nodeId} claims service account ${JSON.stringify(sa)} but is authenticated as ${identity.principal}`,
    };
  return { ok: true };
}

/** Every namespace a node id `<type>~<ip>~<pod>.<ns>~<ns>.svc.<domain>` and its metadata name. */
function claimedNamespaces(
  nodeId: string,
  metadata: Readonly<Record<string, unknown>>,
): { readonly namespace: string; readonly where: string }[] {
  const out: { namespace: string; where: string }[] = [];
  const parts = nodeId.split('~');
  const podId = parts[2] ?? '';
  const dot = podId.lastIndexOf('.');
  if (dot > 0) out.push({ namespace: podId.slice(dot + 1), where: 'node id pod' });
  const domain = parts[3] ?? '';
  if (domain.includes('.')) out.push({ namespace: domain.split('.')[0] ?? '', where: 'node id DNS domain' });
  if (typeof metadata.NAMESPACE === 'string' && metadata.NAMESPACE !== '')
    out.push({ namespace: metadata.NAMESPACE, where: 'metadata NAMESPACE' });
  return out;
}

/** Nodes and pods of the per-proxy EDS tests (locality, node-local, PreferSameNode), as YAML documents. */

/** A Kubernetes Node, with its region and zone topology labels when given. */
export const nodeYaml = (name: string, locality?: { readonly region: string; readonly zone: string }): string => `---
apiVersion: v1
kind: Node
metadata: { name: ${name}${locality ? `, labels: { topology.kubernetes.io/region: ${locality.region}, topology.kubernetes.io/zone: ${locality.zone} }` : ''} }
`;

/** A ready pod of namespace `shop` labelled `app`, on a node. */
export const podYaml = (name: string, ip: string, nodeName: string, app: string): string => `---
apiVersion: v1
kind: Pod
metadata: { name: ${name}, namespace: shop, labels: { app: ${app} } }
spec: { nodeName: ${nodeName} }
status: { podIP: ${ip}, conditions: [{ type: Ready, status: "True" }] }
`;

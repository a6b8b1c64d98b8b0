/**
 * Per-node EDS for Services with `internalTrafficPolicy: Local` (istiod's NodeLocal: a proxy is
 * sent only the endpoints whose pod runs on its node, its NODE_NAME) and with traffic distribution
 * PreferSameNode (priorities by the proxy's node), shared by the compiler
 * (which splits the groups) and the snapshot's classifier (which serves a proxy its node's
 * variant), as ./locality.ts does for localities.
 *
 * The per-node assignments of an endpoints group `G` are in `G#`, as a proxy of no known node
 * gets them, and in `G#<node>`, one group per Kubernetes node of the
 * mesh. Classes list `G` and `G#`; a proxy on node N is served class `<class>#<N>` (after its
 * locality, `<class>@<locality>#<N>`, when the class has locality groups too): the class with
 * `G#N` in place of `G#`. Node names (DNS subdomains) hold no `#` and no `@`.
 */

export const nodeBaseGroup = (group: string): string => `${group}#`;
export const nodeVariantGroup = (group: string, node: string): string => `${group}#${node}`;
export const isNodeBaseGroup = (group: string): boolean => group.endsWith('#');

/** `<class>#<node>`: `#` occurs in no class id the compiler names nor in a locality key. */
export const nodeClassId = (classId: string, node: string): string => `${classId}#${node}`;

/** The class id (maybe a locality class id) and node of a node class id; undefined without a node. */
export function parseNodeClassId(id: string): { readonly classId: string; readonly node: string } | undefined {
  const hash = id.lastIndexOf('#');
  return hash < 0 ? undefined : { classId: id.slice(0, hash), node: id.slice(hash + 1) };
}

/** The groups a proxy on node `node` receives in place of a class's groups. */
export const groupsForNode = (groups: readonly string[], node: string): string[] =>
  groups.map((g) => (isNodeBaseGroup(g) ? `${g}${node}` : g));

/** Whether a string can be a node name of a node class id (a Kubernetes name: no `#`, `@` or `/`). */
export const isNodeName = (name: string): boolean => name !== '' && !/[#@/]/.test(name);

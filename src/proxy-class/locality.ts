/**
 * Per-locality EDS, shared by the compiler (which splits the groups) and the snapshot's classifier
 * (which serves a proxy the variant of its locality), so the relay can place proxies without
 * loading the compiler.
 *
 * An endpoints group `G` keeps the assignments every proxy gets alike. Those whose priorities or
 * weights depend on the proxy's locality (istiod's locality failover and distribute) are in `G@`,
 * as a proxy of no known locality gets them, and in `G@<region>/<zone>/<subzone>`, one group per
 * locality of the mesh. Classes list `G` and `G@`; a proxy in locality L is served class
 * `<class>@<L>`: the class with `G@L` in place of `G@`.
 */

/** A locality as `region/zone/subzone`. */
export type LocalityKey = string;

export const localityBaseGroup = (group: string): string => `${group}@`;
export const localityVariantGroup = (group: string, key: LocalityKey): string => `${group}@${key}`;
export const isLocalityBaseGroup = (group: string): boolean => group.endsWith('@');

/** `<class>@<region>/<zone>/<subzone>`: `@` occurs in no class id the compiler names. */
export const localityClassId = (classId: string, key: LocalityKey): string => `${classId}@${key}`;

/** The class and locality of a locality class id; undefined for a plain class id. */
export function parseLocalityClassId(id: string): { readonly classId: string; readonly key: LocalityKey } | undefined {
  const at = id.indexOf('@');
  return at < 0 ? undefined : { classId: id.slice(0, at), key: id.slice(at + 1) };
}

/** The groups a proxy of locality `key` receives in place of a class's groups. */
export const groupsForLocality = (groups: readonly string[], key: LocalityKey): string[] =>
  groups.map((g) => (isLocalityBaseGroup(g) ? `${g}${key}` : g));

const ISTIO_LOCALITY_LABEL = 'istio-locality';

/**
 * The locality a proxy is in, as istiod finds it: the Envoy node's `locality` when it names a
 * region, else its `istio-locality` label (`region.zone.subzone`), else its Kubernetes Node's
 * (`NODE_NAME` metadata, looked up in `nodes`). Undefined when none says.
 */
export function proxyLocalityKey(
  node: {
    readonly locality?: { readonly region?: string; readonly zone?: string; readonly subZone?: string };
    readonly labels: Readonly<Record<string, string>>;
    readonly nodeName?: string;
  },
  nodes: ReadonlyMap<string, LocalityKey>,
): LocalityKey | undefined {
  const l = node.locality;
  if (l?.region) return `${l.region}/${l.zone ?? ''}/${l.subZone ?? ''}`;
  const label = node.labels[ISTIO_LOCALITY_LABEL];
  if (label) {
    const [region = '', zone = '', subzone = ''] = label.split('.');
    return `${region}/${zone}/${subzone}`;
  }
  return node.nodeName !== undefined ? nodes.get(node.nodeName) : undefined;
}

/**
 * Moves the assignments whose priorities or weights depend on the proxy's locality out of their
 * endpoints groups into per-locality groups (../../proxy-class/locality.ts), once the compile has
 * built everything that reads the endpoints groups whole (gateways' AUTO_PASSTHROUGH clusters).
 */
import { localityKey, variantsOf } from '../endpoints.js';
import { localityBaseGroup, localityVariantGroup } from '../../proxy-class/locality.js';
import type { Locality } from '../../model/service-model.js';
import { emptyTable, type ClassSelector, type GroupId, type ProxyClass, type ResourceTable } from '../types.js';

/**
 * Splits each endpoints group that holds variant assignments; returns the classes with `G@` after
 * each split group `G`, and the node selectors a relay places proxies by (none when nothing split).
 */
export function splitLocalityGroups(
  groups: Map<GroupId, ResourceTable>,
  endpointGroups: Iterable<GroupId>,
  classes: readonly ProxyClass[],
  localities: readonly Locality[],
  nodeLocalities: ReadonlyMap<string, Locality>,
): { readonly classes: ProxyClass[]; readonly nodeSelectors: ClassSelector[] } {
  const split = new Set<GroupId>();
  const keys = localities.map(localityKey);
  for (const id of endpointGroups) {
    const table = groups.get(id);
    if (!table) continue;
    let base: ResourceTable | undefined;
    let variants: ResourceTable[] = [];
    for (const [name, cla] of table.endpoints) {
      const v = variantsOf(cla);
      if (!v) continue;
      if (!base) {
        base = emptyTable();
        groups.set(localityBaseGroup(id), base);
        variants = keys.map((key) => {
          const t = emptyTable();
          groups.set(localityVariantGroup(id, key), t);
          return t;
        });
        split.add(id);
      }
      table.endpoints.delete(name);
      base.endpoints.set(name, v.base);
      keys.forEach((key, i) => (variants[i] as ResourceTable).endpoints.set(name, v.byLocality.get(key) ?? v.base));
    }
  }
  if (split.size === 0) return { classes: [...classes], nodeSelectors: [] };
  return {
    classes: classes.map((c) =>
      c.groups.some((g) => split.has(g))
        ? { ...c, groups: c.groups.flatMap((g) => (split.has(g) ? [g, localityBaseGroup(g)] : [g])) }
        : c,
    ),
    nodeSelectors: [...nodeLocalities].map(([node, l]) => ({
      namespace: '',
      hostname: '',
      selector: {},
      node,
      locality: localityKey(l),
    })),
  };
}

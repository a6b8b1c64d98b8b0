/**
 * Moves the resources whose content depends on the proxy's locality (../locality-variants.ts: EDS
 * assignments, DNS clusters' inline endpoints) out of their groups into per-locality groups
 * (../../proxy-class/locality.ts), once the compile has built everything that reads the groups
 * whole (gateways' AUTO_PASSTHROUGH clusters read the endpoints group).
 */
import { localityKey, variantsOf } from '../locality-variants.js';
import { localityBaseGroup, localityVariantGroup } from '../../proxy-class/locality.js';
import type { Locality } from '../../model/service-model.js';
import { XDS_TYPES } from '../../xds/type-urls.js';
import { emptyTable, type ClassSelector, type GroupId, type ProxyClass, type ResourceTable } from '../types.js';

/**
 * Splits each group that holds resources with variants; returns the classes with `G@` after each
 * split group `G`, and the node selectors a relay places proxies by (none when nothing split).
 */
export function splitLocalityGroups(
  groups: Map<GroupId, ResourceTable>,
  classes: readonly ProxyClass[],
  localities: readonly Locality[],
  nodeLocalities: ReadonlyMap<string, Locality>,
): { readonly classes: ProxyClass[]; readonly nodeSelectors: ClassSelector[] } {
  if (localities.length === 0) return { classes: [...classes], nodeSelectors: [] };
  const split = new Set<GroupId>();
  const keys = localities.map(localityKey);
  for (const [id, table] of [...groups]) {
    let base: ResourceTable | undefined;
    let variants: ResourceTable[] = [];
    for (const type of XDS_TYPES) {
      const resources = table[type] as Map<string, object>;
      for (const [name, resource] of resources) {
        const v = variantsOf(resource);
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
        resources.delete(name);
        (base[type] as Map<string, object>).set(name, v.base);
        keys.forEach((key, i) =>
          ((variants[i] as ResourceTable)[type] as Map<string, object>).set(name, v.byLocality.get(key) ?? v.base),
        );
      }
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

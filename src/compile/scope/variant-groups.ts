/**
 * Moves the resources whose content depends on a proxy's locality or node (../locality-variants.ts,
 * ../node-variants.ts) out of their groups into per-key groups, once the compile has built
 * everything that reads the groups whole (gateways' AUTO_PASSTHROUGH clusters read the endpoints
 * group): from a group `G` into `G<mark>` (what a proxy of no known key gets) and `G<mark><key>`,
 * one per key (../../proxy-class/locality.ts, node-local.ts). Classes list `G<mark>` after `G`.
 */
import { XDS_TYPES } from '../../xds/type-urls.js';
import { emptyTable, type GroupId, type ProxyClass, type ResourceTable } from '../types.js';

/** One dimension proxies differ in (their locality, their node). */
export interface VariantDimension {
  /** Its keys (locality keys, node names), in order. */
  readonly keys: readonly string[];
  /** A resource's variants: what a proxy of no known key gets, and a proxy of each key. */
  variants(resource: object): { readonly base: object; variant(key: string): object } | undefined;
  readonly baseGroup: (group: GroupId) => GroupId;
  readonly variantGroup: (group: GroupId, key: string) => GroupId;
}

/** Splits each group that holds resources with variants; returns the classes with the base group after each split one. */
export function splitVariantGroups(
  groups: Map<GroupId, ResourceTable>,
  classes: readonly ProxyClass[],
  dimension: VariantDimension,
): { readonly classes: ProxyClass[]; readonly split: boolean } {
  const { keys } = dimension;
  const split = new Set<GroupId>();
  for (const [id, table] of [...groups]) {
    let base: ResourceTable | undefined;
    let variants: ResourceTable[] = [];
    for (const type of XDS_TYPES) {
      const resources = table[type] as Map<string, object>;
      for (const [name, resource] of resources) {
        const v = dimension.variants(resource);
        if (!v) continue;
        if (!base) {
          base = emptyTable();
          groups.set(dimension.baseGroup(id), base);
          variants = keys.map((key) => {
            const t = emptyTable();
            groups.set(dimension.variantGroup(id, key), t);
            return t;
          });
          split.add(id);
        }
        resources.delete(name);
        (base[type] as Map<string, object>).set(name, v.base);
        keys.forEach((key, i) =>
          ((variants[i] as ResourceTable)[type] as Map<string, object>).set(name, v.variant(key)),
        );
      }
    }
  }
  if (split.size === 0) return { classes: [...classes], split: false };
  return {
    split: true,
    classes: classes.map((c) =>
      c.groups.some((g) => split.has(g))
        ? { ...c, groups: c.groups.flatMap((g) => (split.has(g) ? [g, dimension.baseGroup(g)] : [g])) }
        : c,
    ),
  };
}

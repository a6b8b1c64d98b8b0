/**
 * Moves the EDS assignments of node-local services (../node-variants.ts) out of their groups into
 * per-node groups (../../proxy-class/node-local.ts), once the compile has built everything that
 * reads the groups whole (gateways' AUTO_PASSTHROUGH clusters read the endpoints group).
 */
import { nodeVariant, nodeVariantsOf } from '../node-variants.js';
import { nodeBaseGroup, nodeVariantGroup } from '../../proxy-class/node-local.js';
import { emptyTable, type GroupId, type ProxyClass, type ResourceTable } from '../types.js';

/** Splits each group that holds node-local assignments; returns the classes with `G#` after each split group `G`. */
export function splitNodeGroups(
  groups: Map<GroupId, ResourceTable>,
  classes: readonly ProxyClass[],
  nodes: readonly string[],
): ProxyClass[] {
  const split = new Set<GroupId>();
  for (const [id, table] of [...groups]) {
    let base: ResourceTable | undefined;
    let variants: ResourceTable[] = [];
    for (const [name, cla] of table.endpoints) {
      const v = nodeVariantsOf(cla);
      if (!v) continue;
      if (!base) {
        base = emptyTable();
        groups.set(nodeBaseGroup(id), base);
        variants = nodes.map((node) => {
          const t = emptyTable();
          groups.set(nodeVariantGroup(id, node), t);
          return t;
        });
        split.add(id);
      }
      table.endpoints.delete(name);
      base.endpoints.set(name, v.base);
      nodes.forEach((node, i) => (variants[i] as ResourceTable).endpoints.set(name, nodeVariant(v, node)));
    }
  }
  if (split.size === 0) return [...classes];
  return classes.map((c) =>
    c.groups.some((g) => split.has(g))
      ? { ...c, groups: c.groups.flatMap((g) => (split.has(g) ? [g, nodeBaseGroup(g)] : [g])) }
      : c,
  );
}

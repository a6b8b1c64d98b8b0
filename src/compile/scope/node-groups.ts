/**
 * The per-node groups (../../proxy-class/node-local.ts) of node-local and PreferSameNode services'
 * EDS assignments (../node-variants.ts).
 */
import { nodeVariant, nodeVariantsOf } from '../node-variants.js';
import { nodeBaseGroup, nodeVariantGroup } from '../../proxy-class/node-local.js';
import type { GroupId, ProxyClass, ResourceTable } from '../types.js';
import { splitVariantGroups } from './variant-groups.js';

/** Splits each group that holds assignments with node variants; returns the classes with `G#` after each split group `G`. */
export function splitNodeGroups(
  groups: Map<GroupId, ResourceTable>,
  classes: readonly ProxyClass[],
  nodes: readonly string[],
): ProxyClass[] {
  return splitVariantGroups(groups, classes, {
    keys: nodes,
    variants: (resource) => {
      const v = nodeVariantsOf(resource);
      return v && { base: v.base, variant: (node) => nodeVariant(v, node) };
    },
    baseGroup: nodeBaseGroup,
    variantGroup: nodeVariantGroup,
  }).classes;
}

/**
 * The per-locality groups (../../proxy-class/locality.ts) of the resources whose content depends
 * on the proxy's locality (../locality-variants.ts: EDS assignments, DNS clusters' inline
 * endpoints), and the Node selectors a relay places a proxy by when it does not say its locality.
 */
import { localityKey, variantsOf } from '../locality-variants.js';
import { localityBaseGroup, localityVariantGroup } from '../../proxy-class/locality.js';
import type { Locality } from '../../model/service-model.js';
import type { ClassSelector, GroupId, ProxyClass, ResourceTable } from '../types.js';
import { splitVariantGroups } from './variant-groups.js';

/**
 * Splits each group that holds resources with locality variants; returns the classes with `G@`
 * after each split group `G`, and the node selectors (none when nothing split).
 */
export function splitLocalityGroups(
  groups: Map<GroupId, ResourceTable>,
  classes: readonly ProxyClass[],
  localities: readonly Locality[],
  nodeLocalities: ReadonlyMap<string, Locality>,
): { readonly classes: ProxyClass[]; readonly nodeSelectors: ClassSelector[] } {
  if (localities.length === 0) return { classes: [...classes], nodeSelectors: [] };
  const done = splitVariantGroups(groups, classes, {
    keys: localities.map(localityKey),
    variants: (resource) => {
      const v = variantsOf(resource);
      return v && { base: v.base, variant: (key) => v.byLocality.get(key) ?? v.base };
    },
    baseGroup: localityBaseGroup,
    variantGroup: localityVariantGroup,
  });
  return {
    classes: done.classes,
    nodeSelectors: done.split
      ? [...nodeLocalities].map(([node, l]) => ({
          namespace: '',
          hostname: '',
          selector: {},
          node,
          locality: localityKey(l),
        }))
      : [],
  };
}

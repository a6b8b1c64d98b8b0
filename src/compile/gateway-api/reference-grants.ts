/**
 * ReferenceGrants: a reference into another namespace (a route's backendRef, a Gateway's
 * certificateRef) is allowed only when a ReferenceGrant in the target's namespace lets objects of
 * the referrer's group/kind in the referrer's namespace refer to the target's group/kind (and name,
 * when the grant names one).
 */
import type { ReferenceGrant } from '../../model/gateway-api.js';

export interface GroupKind {
  readonly group: string;
  readonly kind: string;
}

export class ReferenceGrants {
  private readonly byNamespace = new Map<string, ReferenceGrant[]>();

  constructor(grants: readonly ReferenceGrant[]) {
    for (const g of grants) {
      const list = this.byNamespace.get(g.meta.namespace);
      if (list) list.push(g);
      else this.byNamespace.set(g.meta.namespace, [g]);
    }
  }

  allowed(
    from: GroupKind & { readonly namespace: string },
    to: GroupKind & { readonly namespace: string; readonly name: string },
  ): boolean {
    if (from.namespace === to.namespace) return true;
    return (this.byNamespace.get(to.namespace) ?? []).some(
      (g) =>
        g.spec.from.some((f) => f.group === from.group && f.kind === from.kind && f.namespace === from.namespace) &&
        g.spec.to.some(
          (t) => t.group === to.group && t.kind === to.kind && (t.name === undefined || t.name === to.name),
        ),
    );
  }
}

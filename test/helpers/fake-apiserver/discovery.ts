/**
 * Discovery documents (/api, /api/v1, /apis, /apis/G, /apis/G/V) shaped like kube-apiserver's,
 * built from the catalog and the set of group-versions served right now. A group-version that is
 * not served is absent from /apis and its paths answer 404, as when a CRD is not installed.
 */
import { type Catalog, type ResourceType, groupVersion } from './catalog.js';

const VERBS = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];

function resourceEntry(r: ResourceType): Record<string, unknown> {
  return { name: r.plural, singularName: r.singular, namespaced: r.namespaced, kind: r.kind, verbs: VERBS };
}

export class Discovery {
  constructor(
    private readonly catalog: Catalog,
    private readonly served: ReadonlySet<string>,
  ) {}

  isServed(group: string, version: string): boolean {
    return this.served.has(groupVersion(group, version));
  }

  /** Versions of a group served now, in the catalog's preference order (first = preferred). */
  servedVersions(group: string): string[] {
    const out: string[] = [];
    for (const r of this.catalog.resources) {
      if (r.group !== group) continue;
      for (const v of r.versions) if (this.isServed(group, v) && !out.includes(v)) out.push(v);
    }
    return out;
  }

  coreVersions(): Record<string, unknown> {
    return { kind: 'APIVersions', versions: this.servedVersions(''), serverAddressByClientCIDRs: [] };
  }

  private group(name: string): Record<string, unknown> | undefined {
    const versions = this.servedVersions(name);
    const first = versions[0];
    if (first === undefined) return undefined;
    const gv = (v: string) => ({ groupVersion: `${name}/${v}`, version: v });
    return { name, versions: versions.map(gv), preferredVersion: gv(first) };
  }

  groupList(): Record<string, unknown> {
    const names = [...new Set(this.catalog.resources.map((r) => r.group).filter((g) => g !== ''))];
    const groups = names.map((n) => this.group(n)).filter((g) => g !== undefined);
    return { kind: 'APIGroupList', apiVersion: 'v1', groups };
  }

  groupDoc(name: string): Record<string, unknown> | undefined {
    const g = this.group(name);
    return g && { kind: 'APIGroup', apiVersion: 'v1', ...g };
  }

  resourceList(group: string, version: string): Record<string, unknown> | undefined {
    if (!this.isServed(group, version)) return undefined;
    const resources = this.catalog.resources
      .filter((r) => r.group === group && r.versions.includes(version))
      .map(resourceEntry);
    return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: groupVersion(group, version), resources };
  }
}

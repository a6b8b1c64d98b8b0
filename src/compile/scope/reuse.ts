/**
 * A restricted scope's clusters and endpoints, taken from the full view where they are the same:
 * a service's `outbound|<port>|<subset>|<host>` resources depend on the service, its endpoints and
 * the DestinationRule it gets, so when the scope gives it the same rules the full view's objects
 * are reused (same objects: encoded once). Only services whose rule differs are built again.
 */
import type { MeshService } from '../../model/service-model.js';
import type { CompileContext, ResolvedDestinationRule } from '../context.js';

const rulesKey = (rule: ResolvedDestinationRule | undefined): string =>
  rule?.sources.map((d) => `${d.meta.namespace}/${d.meta.name}`).join(',') ?? '';

/** host → its resources (`outbound|<port>|<subset>|<host>`) with their port. */
function byHost<M>(full: ReadonlyMap<string, M>): Map<string, { name: string; port: number; message: M }[]> {
  const out = new Map<string, { name: string; port: number; message: M }[]>();
  for (const [name, message] of full) {
    const parts = name.split('|');
    if (parts.length !== 4 || parts[0] !== 'outbound') continue;
    const host = parts[3] as string;
    const list = out.get(host) ?? [];
    list.push({ name, port: Number(parts[1]), message });
    out.set(host, list);
  }
  return out;
}

const indexes = new WeakMap<
  ReadonlyMap<string, unknown>,
  Map<string, { name: string; port: number; message: unknown }[]>
>();

/** Whether the view sees the full view's service for the host, with the DestinationRule the full view gives it (then their resources are the same). */
export const sameRule = (fullCtx: CompileContext, view: CompileContext, hostname: string): boolean =>
  fullCtx.model.byHostname.get(hostname) !== undefined &&
  // the same service (a host several namespaces' ServiceEntries define may be another namespace's here)
  view.model.byHostname.get(hostname) === fullCtx.model.byHostname.get(hostname) &&
  rulesKey(fullCtx.destinationRules.lookup(hostname)) === rulesKey(view.destinationRules.lookup(hostname));

export function serviceResources<M>(
  full: ReadonlyMap<string, M>,
  fullCtx: CompileContext,
  view: CompileContext,
  build: (service: MeshService) => ReadonlyMap<string, M>,
): Map<string, M> {
  let index = indexes.get(full) as Map<string, { name: string; port: number; message: M }[]> | undefined;
  if (!index) indexes.set(full, (index = byHost(full)));
  const out = new Map<string, M>();
  for (const service of view.model.services) {
    const h = service.hostname;
    if (sameRule(fullCtx, view, h)) {
      const ports = new Set(service.ports.map((p) => p.port));
      for (const r of index.get(h) ?? []) if (ports.has(r.port) && !out.has(r.name)) out.set(r.name, r.message);
    } else for (const [name, m] of build(service)) if (!out.has(name)) out.set(name, m);
  }
  return out;
}

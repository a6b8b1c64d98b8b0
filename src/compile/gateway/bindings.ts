/**
 * Which VirtualServices each Gateway serves (istiod's PushContext.VirtualServicesForGateway): a
 * VirtualService binds to the gateways its `spec.gateways` names, resolved in its own namespace
 * (`name`, `./name`, `ns/name`, legacy `name.ns`). Bound VirtualServices are kept in namespace/name
 * order (istiod: creation order). A reference to a Gateway that does not exist is reported, as
 * istiod's analyzer does (IST0101).
 */
import { Diagnostics, objectAt } from '../../model/diagnostics.js';
import { gatewayKey, MESH_GATEWAY, resolveGatewayRef } from '../../model/gateway.js';
import type { VirtualService } from '../../model/istio.js';
import type { CompileContext, SourcedHttpRoute, SourcedTcpRoute, SourcedTlsRoute } from '../context.js';
import { appliesToSidecars, resolvedRoutes } from '../virtual-services.js';

export interface BoundVirtualService {
  readonly vs: VirtualService;
  /** Hosts as istiod resolves them: a name without a dot becomes `<name>.<ns>.svc.<domain>`, others stay. */
  readonly hosts: readonly string[];
  readonly http: readonly SourcedHttpRoute[];
  readonly tcp: readonly SourcedTcpRoute[];
  readonly tls: readonly SourcedTlsRoute[];
}

export type GatewayBindings = ReadonlyMap<string, readonly BoundVirtualService[]>;

const IP = /^[0-9.]+$|:/;

/** istiod's ResolveShortnameToFQDN (VirtualService hosts; not meshsnap's destination resolution). */
export function gatewayVsHost(host: string, namespace: string, suffix: string): string {
  if (host === '*' || host.includes('.') || IP.test(host)) return host.toLowerCase();
  return `${host}.${namespace}.svc.${suffix}`.toLowerCase();
}

const cache = new WeakMap<CompileContext, GatewayBindings>();

export function gatewayBindings(ctx: CompileContext): GatewayBindings {
  const hit = cache.get(ctx);
  if (hit) return hit;
  const known = new Set(ctx.model.gateways.map(gatewayKey));
  const out = new Map<string, BoundVirtualService[]>();
  const suffix = ctx.mesh.domainSuffix;
  for (const vs of ctx.model.virtualServices) {
    if (!vs.spec.hosts.length || !vs.spec.gateways?.length) continue;
    const refs = [...new Set(vs.spec.gateways.map((g) => resolveGatewayRef(g, vs.meta.namespace)))];
    const bound = refs.filter((r) => r !== MESH_GATEWAY);
    if (!bound.length) continue;
    // Routes of a VirtualService sidecars also use were already checked there: report once.
    const diags = appliesToSidecars(vs) ? new Diagnostics() : ctx.diags;
    const routes = resolvedRoutes(
      vs,
      ctx.model.virtualServices,
      { domainSuffix: suffix, known: ctx.model.byHostname },
      diags,
    );
    const entry: BoundVirtualService = {
      vs,
      hosts: [...new Set(vs.spec.hosts.map((h) => gatewayVsHost(h, vs.meta.namespace, suffix)))],
      ...routes,
    };
    vs.spec.gateways.forEach((raw, i) => {
      const ref = resolveGatewayRef(raw, vs.meta.namespace);
      if (ref === MESH_GATEWAY) return;
      if (!known.has(ref))
        ctx.diags.warn({
          code: 'unknown-gateway',
          message: `gateway ${ref} is not in the inputs; no proxy serves this VirtualService through it`,
          ...objectAt(vs.kind, vs, `spec.gateways[${i}]`),
        });
    });
    for (const ref of bound) {
      const list = out.get(ref);
      if (list) list.push(entry);
      else out.set(ref, [entry]);
    }
  }
  cache.set(ctx, out);
  return out;
}

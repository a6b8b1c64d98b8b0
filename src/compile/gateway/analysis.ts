/**
 * What istiod's analyzers say about Gateways, for the mistakes that leave a gateway silently empty:
 *
 * - a Gateway whose selector matches no Pod in the inputs (IST0101 ReferencedResourceNotFound):
 *   no router class is built for it;
 * - a VirtualService host that no server of a Gateway it binds to allows
 *   (IST0132 VirtualServiceHostNotFoundInGateway): that host is not served there.
 */
import { gatewayKey, resolveGatewayRef, type Gateway } from '../../model/gateway.js';
import type { Workload } from '../../model/service-model.js';
import { selects } from '../../proxy-class/class-id.js';
import type { CompileContext } from '../context.js';
import { gatewayBindings } from './bindings.js';
import { intersectHosts, sanitizeServerHosts, serverHostsFor } from './server-hosts.js';

const originOf = (o: { origin: { file?: string; index?: number } }) => ({
  ...(o.origin.file !== undefined ? { file: o.origin.file } : {}),
  ...(o.origin.index !== undefined ? { index: o.origin.index } : {}),
});

export function analyzeGateways(ctx: CompileContext): void {
  const gateways = ctx.model.gateways;
  if (!gateways.length) return;
  const workloads = ctx.model.workloads as readonly Workload[];
  for (const gw of gateways) {
    const selector = gw.spec.selector;
    if (!selector || Object.keys(selector).length === 0) continue;
    if (workloads.some((w) => selects(selector, w.labels))) continue;
    ctx.diags.warn({
      code: 'gateway-selects-nothing',
      message: `selector ${JSON.stringify(selector)} matches no Pod in the inputs; no gateway proxy gets this Gateway's config`,
      kind: 'Gateway',
      namespace: gw.meta.namespace,
      name: gw.meta.name,
      field: 'spec.selector',
      ...originOf(gw),
    });
  }
  const byKey = new Map<string, Gateway>(gateways.map((g) => [gatewayKey(g), g]));
  for (const [key, bound] of gatewayBindings(ctx)) {
    const gw = byKey.get(key);
    if (!gw) continue;
    const serverHosts = gw.spec.servers.flatMap((s) => sanitizeServerHosts(s.hosts, gw.meta.namespace));
    for (const b of bound) {
      const visible = serverHostsFor(serverHosts, b.vs.meta.namespace);
      const missing = b.hosts.filter((h) => intersectHosts(visible, [h]).length === 0);
      if (!missing.length) continue;
      const i = b.vs.spec.gateways?.findIndex((g) => resolveGatewayRef(g, b.vs.meta.namespace) === key) ?? -1;
      ctx.diags.warn({
        code: 'host-not-in-gateway',
        message: `hosts ${missing.join(', ')} are not allowed by any server of gateway ${key}; they are not served there`,
        kind: b.vs.kind,
        namespace: b.vs.meta.namespace,
        name: b.vs.meta.name,
        field: i >= 0 ? `spec.gateways[${i}]` : 'spec.gateways',
        ...originOf(b.vs),
      });
    }
  }
}

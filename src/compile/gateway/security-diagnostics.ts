/**
 * What is worth saying about the security policies a gateway proxy enforces: a policy matching on
 * peer identity (principals, namespaces, source.principal/namespace) on a gateway none of whose
 * servers asks clients for a certificate (ISTIO_MUTUAL or MUTUAL). There the peer has no identity,
 * so those fields never match: an ALLOW denies everything it names, a DENY lets it through.
 */
import { objectAt } from '../../model/diagnostics.js';
import type { CompileContext } from '../context.js';
import { usesPeerIdentity } from '../security/diagnostics.js';
import type { RouterSecurity } from '../security/workload-security.js';
import { reportOnce } from '../route/report-once.js';
import type { Gateway } from '../../model/gateway.js';

const asksForClientCertificate = (gateways: readonly Gateway[]): boolean =>
  gateways.some((g) => g.spec.servers.some((s) => s.tls?.mode === 'ISTIO_MUTUAL' || s.tls?.mode === 'MUTUAL'));

export function reportRouterSecurity(
  ctx: CompileContext,
  namespace: string,
  gateways: readonly Gateway[],
  security: RouterSecurity,
): void {
  if (asksForClientCertificate(gateways)) return;
  const { custom, deny, audit, allow } = security.authz;
  for (const p of [...custom, ...deny, ...audit, ...allow]) {
    if (!usesPeerIdentity(p)) continue;
    reportOnce(ctx.diags, {
      severity: 'warning',
      code: 'principals-without-mtls',
      message: `it matches on peer identity (principals, namespaces, …) and applies to the gateway proxies of namespace ${namespace}, whose servers ask no client certificate (no ISTIO_MUTUAL or MUTUAL server): those fields never match there`,
      ...objectAt(p.kind, p, 'spec.rules'),
    });
  }
}

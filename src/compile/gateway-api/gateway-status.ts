/**
 * A Gateway's status (istiod's reportGatewayStatus): Accepted unless listeners or addresses are
 * invalid, Programmed when the Service fronting it exists (deployment.ts; its cluster IPs are the
 * `addresses`), InsecureFrontendValidationMode when `spec.tls.frontend` allows the insecure fallback,
 * and per listener its conditions, the route kinds it carries and how many routes attach.
 */
import type { KubernetesGateway } from '../../model/gateway-api.js';
import type { GatewayStatus } from '../../model/object-status.js';
import type { GatewayDeployment } from './deployment.js';
import type { ListenerResult } from './listeners.js';
import { conditions, type ConditionSpec, type ConfigError } from './status.js';

export function gatewayStatus(
  gw: KubernetesGateway,
  listeners: readonly ListenerResult[],
  attached: (listener: string) => number,
  deployment: GatewayDeployment,
): GatewayStatus {
  const valid = listeners.filter((l) => l.conditions.every((c) => c.type === 'Conflicted' || !c.error)).length;
  let accepted: ConditionSpec = { type: 'Accepted', reason: 'Accepted', message: 'Resource accepted' };
  if (valid === 0 && listeners.length > 0)
    accepted = {
      ...accepted,
      error: { reason: 'ListenersNotValid', message: "None of the Gateway's listeners are valid" },
    };
  else if (valid < listeners.length)
    accepted = {
      ...accepted,
      reason: 'ListenersNotValid',
      message: "One or more of the Gateway's listeners are invalid",
    };
  const fronting = deployment.services;
  // istiod's ResolveGatewayInstances: `<service FQDN>:<port>` for each listener port the Service has.
  const ports = [...new Set(listeners.map((l) => l.listener.port))];
  const assigned = fronting.flatMap((s) => {
    const host = `${s.meta.name}.${s.meta.namespace}.svc.`;
    const full = deployment.hostnames.find((h) => h.startsWith(host)) ?? host;
    return ports.filter((p) => s.ports.some((sp) => sp.port === p)).map((p) => `${full}:${p}`);
  });
  const programmedError: ConfigError | undefined = fronting.length
    ? undefined
    : {
        reason: 'AddressNotAssigned',
        message: `Failed to assign to any requested addresses: hostname ${deployment.hostnames.join(', ')} not found`,
      };
  const addresses = fronting
    .flatMap((s) => (s.clusterIPs.length ? s.clusterIPs : s.clusterIP ? [s.clusterIP] : []))
    .filter((ip) => ip !== 'None')
    .map((value) => ({ type: 'IPAddress', value }));
  const generation = gw.meta.generation;
  return {
    conditions: conditions(
      [
        accepted,
        {
          type: 'Programmed',
          reason: 'Programmed',
          message: `Resource programmed, assigned to service(s) ${assigned.join(', ')}`,
          ...(programmedError ? { error: programmedError } : {}),
        },
        { type: 'ResolvedRefs', reason: 'ResolvedRefs', message: 'All references resolved' },
        ...(insecureFrontendValidation(gw)
          ? [
              {
                type: 'InsecureFrontendValidationMode',
                reason: 'ConfigurationChanged',
                message: 'Gateway is operating in AllowInsecureFallback mode for frontend validation',
              },
            ]
          : []),
      ],
      generation,
    ),
    listeners: listeners.map((l) => ({
      name: l.listener.name,
      supportedKinds: l.supportedKinds.map((k) => ({ group: k.group, kind: k.kind })),
      attachedRoutes: attached(l.listener.name),
      conditions: conditions(l.conditions, generation),
    })),
    ...(addresses.length ? { addresses } : {}),
  };
}

/** istiod's InsecureFrontendValidationMode condition: `spec.tls.frontend` (default or a port) in AllowInsecureFallback. */
function insecureFrontendValidation(gw: KubernetesGateway): boolean {
  const f = gw.spec.frontendTls;
  if (!f) return false;
  return [f.default, ...f.perPort.map((p) => p.tls)].some((t) => t.validation?.mode === 'AllowInsecureFallback');
}

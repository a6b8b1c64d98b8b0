/**
 * A Gateway's status (istiod's reportGatewayStatus): Accepted unless listeners are invalid,
 * Programmed when a Service fronts the Gateway's pods (its addresses are the Service's cluster
 * IPs), and per listener its conditions, the route kinds it carries and how many routes attach.
 */
import { GATEWAY_NAME_LABEL, type KubernetesGateway } from '../../model/gateway-api.js';
import type { Service } from '../../model/k8s.js';
import type { GatewayStatus } from '../../model/object-status.js';
import type { ListenerResult } from './listeners.js';
import { conditions, type ConditionSpec, type ConfigError } from './status.js';

/** Services of the Gateway's namespace selecting its pods (Istio's automated deployment makes `<gateway>-<class>`). */
export function gatewayServices(gw: KubernetesGateway, services: readonly Service[]): Service[] {
  return services.filter(
    (s) =>
      s.meta.namespace === gw.meta.namespace &&
      s.selector !== undefined &&
      s.selector[GATEWAY_NAME_LABEL] === gw.meta.name,
  );
}

export function gatewayStatus(
  gw: KubernetesGateway,
  listeners: readonly ListenerResult[],
  attached: (listener: string) => number,
  services: readonly Service[],
  domainSuffix: string,
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
  const fronting = gatewayServices(gw, services);
  const programmedError: ConfigError | undefined = fronting.length
    ? undefined
    : {
        reason: 'AddressNotAssigned',
        message: `Failed to assign to any requested addresses: no Service in ${gw.meta.namespace} selects ${GATEWAY_NAME_LABEL}=${gw.meta.name}`,
      };
  const hosts = fronting.map((s) => `${s.meta.name}.${s.meta.namespace}.svc.${domainSuffix}`);
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
          message: `Resource programmed, assigned to service(s) ${hosts.join(', ')}`,
          ...(programmedError ? { error: programmedError } : {}),
        },
        { type: 'ResolvedRefs', reason: 'ResolvedRefs', message: 'All references resolved' },
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

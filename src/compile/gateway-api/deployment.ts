/**
 * Where a Gateway's proxies are (istiod's extractGatewayServices). A Gateway without a Hostname
 * address is *managed*: Istio deploys it, as pods labelled `gateway.networking.k8s.io/gateway-name:
 * <gateway>` behind the Service `<gateway>-<class>`. A Gateway with Hostname addresses is deployed
 * by hand: each names a Service (`name` in the Gateway's namespace, or a FQDN), and the proxies are
 * the pods the first of them that exists selects. Other address types are ignored then
 * (`UnsupportedAddress`).
 */
import { GATEWAY_NAME_LABEL, type KubernetesGateway } from '../../model/gateway-api.js';
import type { Service } from '../../model/k8s.js';
import type { ConfigError } from './status.js';

export interface GatewayDeployment {
  /** The Service FQDNs fronting the Gateway, as istiod names them. */
  readonly hostnames: readonly string[];
  /** Those that exist. */
  readonly services: readonly Service[];
  /** The labels of the Gateway's pods: the converted Istio Gateway's selector. */
  readonly selector: Readonly<Record<string, string>>;
  readonly error?: ConfigError;
}

export function gatewayDeployment(
  gw: KubernetesGateway,
  byHostname: ReadonlyMap<string, Service>,
  domainSuffix: string,
): GatewayDeployment {
  const hostAddresses = gw.spec.addresses.filter((a) => a.type === 'Hostname');
  const fqdn = (name: string) => `${name}.${gw.meta.namespace}.svc.${domainSuffix}`;
  if (!hostAddresses.length) {
    const hostname = fqdn(`${gw.meta.name}-${gw.spec.gatewayClassName}`);
    const service = byHostname.get(hostname);
    return {
      hostnames: [hostname],
      services: service ? [service] : [],
      selector: { [GATEWAY_NAME_LABEL]: gw.meta.name },
    };
  }
  const hostnames = hostAddresses.map((a) => (a.value.includes('.') ? a.value : fqdn(a.value)));
  const services = hostnames.flatMap((h) => {
    const s = byHostname.get(h);
    return s ? [s] : [];
  });
  const skipped = gw.spec.addresses.filter((a) => a.type !== 'Hostname').map((a) => a.value);
  const selecting = services.find((s) => s.selector && Object.keys(s.selector).length > 0);
  return {
    hostnames,
    services,
    // No Service to take pods from: a selector no pod carries.
    selector: selecting?.selector ?? { [GATEWAY_NAME_LABEL]: gw.meta.name },
    ...(skipped.length
      ? {
          error: {
            reason: 'UnsupportedAddress',
            message: `only Hostname is supported, ignoring [${skipped.join(' ')}]`,
          },
        }
      : {}),
  };
}

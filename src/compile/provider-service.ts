/**
 * The service an extension provider names (`[<namespace>/]<hostname>`), as istiod's LookupCluster
 * finds it: with a namespace, only a service of that namespace. External authorization and tracing
 * providers send to its `outbound|<port>||<hostname>` cluster.
 */
import type { MeshService, ServiceModel } from '../model/service-model.js';

export function providerService(model: ServiceModel, service: string): MeshService | undefined {
  const slash = service.indexOf('/');
  const svc = model.byHostname.get(slash < 0 ? service : service.slice(slash + 1));
  return svc && (slash < 0 || svc.namespace === service.slice(0, slash)) ? svc : undefined;
}

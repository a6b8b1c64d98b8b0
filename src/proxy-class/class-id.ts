/**
 * Proxy class ids, shared by the compiler (which names the classes) and the snapshot's
 * classifier (which places a connecting proxy into one), so the relay can place proxies without
 * loading the compiler.
 */

/**
 * `sidecar/<ns>/<service,service>` (class service names, classServiceName, in hostname order);
 * `sidecar/<ns>/_` for a workload no service selects. When security policies, Sidecar resources,
 * DestinationRules, VirtualService `sourceLabels` or Telemetries with access logging select the
 * workload by label, their keys (sorted) follow:
 * `sidecar/<ns>/<services>/<key,key>`.
 */
export function sidecarClassId(
  namespace: string,
  serviceNames: readonly string[],
  policyKeys: readonly string[] = [],
): string {
  const base = `sidecar/${namespace}/${serviceNames.length ? serviceNames.join(',') : '_'}`;
  return policyKeys.length ? `${base}/${[...policyKeys].sort().join(',')}` : base;
}

/**
 * `router/<ns>/<service,service|_>/<gwNs>/<gwName>,<gwNs>/<gwName>`: a gateway proxy of namespace
 * `ns`, selected by those services (names in hostname order), configured by those Gateways
 * (`<namespace>/<name>` in that order). When AuthorizationPolicies, RequestAuthentications,
 * DestinationRules, VirtualService `sourceLabels` or Telemetries select the proxy by label, their
 * keys (sorted) follow: `…/<gateways>/<key,key>`.
 */
export function routerClassId(
  namespace: string,
  serviceNames: readonly string[],
  gatewayKeys: readonly string[],
  policyKeys: readonly string[] = [],
): string {
  const base = `router/${namespace}/${serviceNames.length ? serviceNames.join(',') : '_'}/${gatewayKeys.join(',')}`;
  return policyKeys.length ? `${base}/${[...policyKeys].sort().join(',')}` : base;
}

/**
 * Whether a policy key (`authz:…`, `jwt:…`, `peer:…`, `sidecar:…`, `dr:…`, `telemetry:…`) applies
 * to gateway proxies: PeerAuthentication and the Sidecar resource do not; a DestinationRule's
 * workloadSelector does (istiod's SidecarScope.DestinationRule, which gateways use too), and so does
 * a Telemetry (istiod's ShouldAttachPolicy).
 */
export const appliesToRouters = (policyKey: string): boolean =>
  !policyKey.startsWith('peer:') && !policyKey.startsWith('sidecar:');

/** Whether a service selector picks a workload with these labels (every selector label matches). */
export function selects(selector: Readonly<Record<string, string>>, labels: Readonly<Record<string, string>>): boolean {
  // for…in, not Object.entries: no array per call (called for every pod × service of a namespace).
  for (const k in selector) if (Object.hasOwn(selector, k) && labels[k] !== selector[k]) return false;
  return true;
}

/**
 * How a service selecting a workload is named in class ids. A Kubernetes Service by its name (the
 * first label of `<name>.<ns>.svc.<domain>`); a ServiceEntry host as written (`api.example.com`,
 * `*.wikipedia.org`), with a trailing dot when it has none: Service names never hold a dot, so no
 * entry host reads as a Service name, and two hosts never share a name.
 */
export function classServiceName(hostname: string, serviceEntry: boolean): string {
  if (serviceEntry) return hostname.includes('.') ? hostname : `${hostname}.`;
  const dot = hostname.indexOf('.');
  return dot > 0 ? hostname.slice(0, dot) : hostname;
}

/**
 * Which stored objects keep `metadata.creationTimestamp`: the Istio kinds whose age the compile
 * reads (istiod's oldest-first choices): a namespace's Sidecar (select-sidecar.ts), its Telemetries
 * (telemetry-logs.ts), PeerAuthentications (peer-authn.ts), which namespace's ServiceEntry for a
 * shared host a namespace sees (model/service-entries.ts), and which of several VirtualServices for
 * one host a sidecar uses (compile/virtual-services.ts), and the order a namespace's EnvoyFilters
 * of one priority apply in (istiod's sortEnvoyFilters: priority, creation time, name). Shared by the
 * projection path (canonical-object.ts) and the recorded path (recorded-bytes.ts), which must write
 * the same bytes. Pure.
 */
const AGE_ORDERED_KINDS: ReadonlySet<string> = new Set([
  'Sidecar',
  'Telemetry',
  'PeerAuthentication',
  'ServiceEntry',
  'VirtualService',
  'EnvoyFilter',
]);

const isIstioApi = (apiVersion: unknown): boolean =>
  typeof apiVersion === 'string' && /^(networking|security|telemetry)\.istio\.io\//.test(apiVersion);

/** Whether an object of this kind and apiVersion keeps its creationTimestamp (an Ingress too: canonical-object.ts). */
export const isAgeOrdered = (kind: unknown, apiVersion: unknown): boolean =>
  typeof kind === 'string' && AGE_ORDERED_KINDS.has(kind) && isIstioApi(apiVersion);

/**
 * Istio networking resource `EnvoyFilter` (networking.istio.io v1alpha3): patches to the Envoy
 * resources istiod generates for the proxies it selects. The inputs layer validates raw documents
 * into these types; the compile converts each patch value into the Envoy message it names and
 * applies it as istiod's pilot/pkg/networking/core/envoyfilter does.
 */
import type { Origin } from './diagnostics.js';
import type { JsonValue } from './json-value.js';
import type { ObjectMeta } from './k8s.js';

export type EnvoyFilterApplyTo =
  | 'LISTENER'
  | 'FILTER_CHAIN'
  | 'NETWORK_FILTER'
  | 'HTTP_FILTER'
  | 'ROUTE_CONFIGURATION'
  | 'VIRTUAL_HOST'
  | 'HTTP_ROUTE'
  | 'CLUSTER'
  | 'LISTENER_FILTER';

export type EnvoyFilterOperation =
  'MERGE' | 'MERGE_AND_REPLACE_LIST' | 'ADD' | 'REMOVE' | 'INSERT_BEFORE' | 'INSERT_AFTER' | 'INSERT_FIRST' | 'REPLACE';

export type EnvoyFilterContext = 'ANY' | 'SIDECAR_INBOUND' | 'SIDECAR_OUTBOUND' | 'GATEWAY';

export interface EnvoyFilterListenerMatch {
  portNumber?: number;
  name?: string;
  listenerFilter?: string;
  filterChain?: {
    name?: string;
    sni?: string;
    transportProtocol?: string;
    applicationProtocols?: string;
    destinationPort?: number;
    filter?: { name?: string; subFilter?: { name?: string } };
  };
}

export interface EnvoyFilterRouteConfigurationMatch {
  portNumber?: number;
  portName?: string;
  gateway?: string;
  name?: string;
  vhost?: {
    name?: string;
    domainName?: string;
    route?: { name?: string; action?: 'ANY' | 'ROUTE' | 'REDIRECT' | 'DIRECT_RESPONSE' };
  };
}

export interface EnvoyFilterClusterMatch {
  portNumber?: number;
  service?: string;
  subset?: string;
  name?: string;
}

export interface EnvoyFilterPatch {
  /** Position in spec.configPatches (for field paths). */
  readonly index: number;
  readonly applyTo: EnvoyFilterApplyTo;
  /** match.context, ANY when absent. */
  readonly context: EnvoyFilterContext;
  readonly listener?: EnvoyFilterListenerMatch;
  readonly routeConfiguration?: EnvoyFilterRouteConfigurationMatch;
  readonly cluster?: EnvoyFilterClusterMatch;
  readonly proxy?: { readonly proxyVersion?: string; readonly metadata?: Readonly<Record<string, string>> };
  /** INSERT_* on other than HTTP_FILTER/NETWORK_FILTER/HTTP_ROUTE/LISTENER_FILTER already turned into ADD (istiod). */
  readonly operation: EnvoyFilterOperation;
  readonly filterClass?: 'AUTHN' | 'AUTHZ' | 'STATS';
  /** patch.value as written (converted by the compile with messageFromJson). */
  readonly value?: JsonValue;
}

export interface EnvoyFilter {
  readonly kind: 'EnvoyFilter';
  readonly apiVersion: string;
  readonly meta: ObjectMeta;
  readonly origin: Origin;
  readonly creationTimestamp?: string;
  /** spec.priority, 0 when absent. */
  readonly priority: number;
  /** spec.workloadSelector.labels when not empty. */
  readonly workloadLabels?: Readonly<Record<string, string>>;
  readonly targetRefs?: readonly { group?: string; kind: string; name: string }[];
  readonly configPatches: readonly EnvoyFilterPatch[];
}

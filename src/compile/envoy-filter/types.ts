/** The patch engine's interface (shared design, part 3): patches resolved for one proxy, in istiod's order. */
import type { EnvoyFilterPatch } from '../../model/envoy-filter.js';

export interface ResolvedPatch extends Omit<EnvoyFilterPatch, 'value'> {
  /** $Properties of the applyTo's message type (Listener, FilterChain, Filter, HttpFilter, RouteConfiguration, VirtualHost, Route, Cluster, ListenerFilter). */
  readonly value?: object;
  /** '<namespace>/<name>' of the EnvoyFilter (diagnostics). */
  readonly source: string;
}

export type PatchContext = 'SIDECAR_INBOUND' | 'SIDECAR_OUTBOUND' | 'GATEWAY';

/**
 * What istiod reports and recovers from: a MERGE of two typed configs of different message types
 * makes its proto merge panic; istiod logs "patch caused panic, so the patches did not take effect".
 */
export type PatchPanicHandler = (patch: ResolvedPatch, message: string) => void;

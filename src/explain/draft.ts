/** An answer while `explain` builds it, and the pieces every step shares (upstream clusters, outcomes). Pure. */
import type { WeightedTarget } from './network-filters.js';
import { uniqueProvenance } from './provenance.js';
import type { ClusterAnswer, ExplainRequest, Explanation, Outcome, Provenance, ProxyResources } from './types.js';
import { clusterAnswer } from './upstream.js';

export type Answered = Omit<
  Explanation,
  'request' | 'outcome' | 'summary' | 'status' | 'clusters' | 'provenance' | 'notes'
>;

/** Mutable pieces of an answer while it is being built. */
export interface Draft {
  outcome?: Outcome;
  summary?: string;
  status?: number;
  notes: string[];
  clusters: ClusterAnswer[];
  rest: { -readonly [K in keyof Answered]?: Answered[K] };
}

export function finish(req: ExplainRequest, d: Draft): Explanation {
  const pieces: (readonly Provenance[])[] = [
    d.rest.filterChain?.provenance ?? [],
    d.rest.virtualHost?.provenance ?? [],
    d.rest.route?.provenance ?? [],
    ...d.clusters.map((c) => c.provenance),
  ];
  return {
    request: req,
    outcome: d.outcome ?? 'unsupported',
    summary: d.summary ?? 'explain could not follow this request',
    ...(d.status !== undefined ? { status: d.status } : {}),
    ...d.rest,
    clusters: d.clusters,
    provenance: uniqueProvenance(pieces),
    notes: d.notes,
  };
}

export function upstreamOutcome(clusters: readonly ClusterAnswer[], fallback: Outcome): Outcome {
  if (clusters.length > 0 && clusters.every((c) => c.name === 'BlackHoleCluster')) return 'blackhole';
  if (clusters.length > 0 && clusters.every((c) => /^(Inbound)?PassthroughCluster$/.test(c.name))) return 'passthrough';
  return fallback;
}

export const targetsText = (targets: readonly WeightedTarget[]): string =>
  targets.map((t) => (targets.length > 1 ? `${t.name} (${t.weight}%)` : t.name)).join(', ');

export function upstream(d: Draft, targets: WeightedTarget[], resources: ProxyResources, originalDst: string): void {
  d.clusters = targets.map((t) => clusterAnswer(t, resources, originalDst));
  for (const c of d.clusters)
    if (!c.found) d.notes.push(`cluster ${c.name} is not served to this proxy: Envoy answers 503 (no cluster)`);
}

/** Istio's simulation calls these protocol errors: the bytes the client sends are not what the chain expects. */
export function protocolError(req: ExplainRequest, d: Draft, summary: string): Explanation {
  d.outcome = 'protocol_error';
  d.summary = summary;
  return finish(req, d);
}

/**
 * `explain --across A..B`: the same question asked of every version in a range, compactly: per
 * version a digest of the answer and its summary, and where the answer changed, which parts did
 * (outcome, listener, filter chain, virtual host, route, clusters, endpoints, Istio objects). Pure.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { canonicalJson } from '../canonical-json.js';
import { provenanceLabel } from './provenance.js';
import type { Explanation } from './types.js';

export interface VersionAnswer {
  readonly version: string;
  readonly digest: string;
  readonly outcome: Explanation['outcome'];
  readonly summary: string;
}

export interface AnswerChange {
  readonly from: string;
  readonly to: string;
  /** Part → its compact form before and after. */
  readonly parts: Readonly<Record<string, { readonly before: string; readonly after: string }>>;
}

export interface AcrossAnswer {
  readonly versions: readonly VersionAnswer[];
  readonly changes: readonly AnswerChange[];
}

/** The digest of an answer (everything but the request, which is the same question each time). */
export function answerDigest(e: Explanation): string {
  const { request: _request, ...answer } = e;
  return `sha256:${bytesToHex(sha256(new TextEncoder().encode(canonicalJson(answer))))}`;
}

/** Each part of an answer as one short line, the units the changes are told in. */
export function answerParts(e: Explanation): Record<string, string> {
  const chain = e.filterChain;
  return {
    outcome: `${e.outcome}${e.status !== undefined ? ` ${e.status}` : ''}`,
    listener: e.listener?.name ?? '-',
    filterChain: chain
      ? chain.isDefault
        ? `default ${chain.name ?? ''}`.trim()
        : (chain.name ?? `#${String(chain.index)}`)
      : '-',
    routeConfig: e.routeConfig?.name ?? '-',
    virtualHost: e.virtualHost?.name ?? '-',
    route: e.route ? `${e.route.name ?? `#${e.route.index}`}` : '-',
    clusters: e.clusters.map((c) => `${c.name} ${c.weight}%`).join(', ') || '-',
    endpoints:
      e.clusters
        .map(
          (c) =>
            `${c.name}: ${c.endpoints.map((p) => `${p.address}${p.port !== undefined ? `:${p.port}` : ''}`).join(' ') || 'none'}`,
        )
        .join('; ') || '-',
    istioObjects: e.provenance.map(provenanceLabel).join(', ') || '-',
  };
}

export function across(answers: readonly { version: string; explanation: Explanation }[]): AcrossAnswer {
  const versions = answers.map(({ version, explanation }) => ({
    version,
    digest: answerDigest(explanation),
    outcome: explanation.outcome,
    summary: explanation.summary,
  }));
  const changes: AnswerChange[] = [];
  for (let i = 1; i < answers.length; i++) {
    const prev = answers[i - 1] as (typeof answers)[number];
    const next = answers[i] as (typeof answers)[number];
    if (versions[i - 1]?.digest === versions[i]?.digest) continue;
    const before = answerParts(prev.explanation);
    const after = answerParts(next.explanation);
    const parts: Record<string, { before: string; after: string }> = {};
    for (const key of Object.keys(before))
      if (before[key] !== after[key]) parts[key] = { before: before[key] as string, after: after[key] as string };
    if (Object.keys(parts).length === 0)
      parts.details = { before: versions[i - 1]?.digest ?? '', after: versions[i]?.digest ?? '' };
    changes.push({ from: prev.version, to: next.version, parts });
  }
  return { versions, changes };
}

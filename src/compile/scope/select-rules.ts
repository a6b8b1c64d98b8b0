/**
 * DestinationRules with a workloadSelector, per namespace: which of them select a workload (istiod:
 * SidecarScope.DestinationRule, outbound only, rules of the proxy's own namespace only). Those
 * with labels to match name the sidecar classes they select (`dr:<ns>/<name>`), as Sidecars and
 * security policies do, so the relay places a proxy by its labels; an empty selector picks every
 * workload of its namespace, so it names no class.
 */
import type { DestinationRule } from '../../model/istio.js';
import { selects } from '../../proxy-class/class-id.js';
import { hasWorkloadSelector } from '../destination-rules.js';
import { perCompile } from '../per-compile.js';

export interface SelectorRuleIndex {
  /** The rules of `namespace` whose workloadSelector picks a workload with these labels, in name order. */
  selecting(namespace: string, labels: Readonly<Record<string, string>>): DestinationRule[];
  /** Every rule with a workloadSelector of `namespace`, in name order; undefined when it has none. */
  inNamespace(namespace: string): readonly DestinationRule[] | undefined;
  /** How many rules have a workloadSelector, mesh-wide. */
  readonly count: number;
  /** The rules with labels to match, with their class keys (for placing nodes into classes). */
  readonly selectors: readonly {
    readonly namespace: string;
    readonly selector: Readonly<Record<string, string>>;
    readonly key: string;
  }[];
}

export const destinationRuleKey = (dr: DestinationRule): string => `dr:${dr.meta.namespace}/${dr.meta.name}`;

const matchLabelsOf = (dr: DestinationRule): Readonly<Record<string, string>> =>
  dr.spec.workloadSelector?.matchLabels ?? {};

/** The keys of the rules that name classes (a selector with labels). */
export const classKeysOf = (rules: readonly DestinationRule[]): string[] =>
  rules.filter((dr) => Object.keys(matchLabelsOf(dr)).length > 0).map(destinationRuleKey);

/** Once per compile: the visibility scopes and the sidecar shapes read the same index. */
export const selectorRulesOf = perCompile((ctx): SelectorRuleIndex => indexSelectorRules(ctx.model.destinationRules));

export function indexSelectorRules(rules: readonly DestinationRule[]): SelectorRuleIndex {
  const byNamespace = new Map<string, DestinationRule[]>();
  const byName = (a: DestinationRule, b: DestinationRule) => (a.meta.name < b.meta.name ? -1 : 1);
  for (const dr of rules.filter(hasWorkloadSelector)) {
    const list = byNamespace.get(dr.meta.namespace);
    if (list) list.push(dr);
    else byNamespace.set(dr.meta.namespace, [dr]);
  }
  for (const list of byNamespace.values()) list.sort(byName);
  let count = 0;
  for (const list of byNamespace.values()) count += list.length;
  return {
    inNamespace: (namespace) => byNamespace.get(namespace),
    count,
    selecting: (namespace, labels) =>
      (byNamespace.get(namespace) ?? []).filter((dr) => selects(matchLabelsOf(dr), labels)),
    selectors: [...byNamespace.values()]
      .flat()
      .filter((dr) => Object.keys(matchLabelsOf(dr)).length > 0)
      .map((dr) => ({ namespace: dr.meta.namespace, selector: matchLabelsOf(dr), key: destinationRuleKey(dr) })),
  };
}

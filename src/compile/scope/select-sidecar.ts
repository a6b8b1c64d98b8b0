/**
 * Which Sidecar applies to a workload, as istiod's sidecar index picks it
 * (PushContext.initSidecarScopes / getSidecarScope): the oldest Sidecar of the workload's
 * namespace whose workloadSelector matches its labels; else the oldest one of its namespace
 * without a selector; else the root namespace's selector-less Sidecar; else none (every
 * visible service). "Oldest" is creationTimestamp, then name, as istiod sorts configs.
 */
import type { Sidecar } from '../../model/sidecar.js';
import { selects } from '../../proxy-class/class-id.js';

export interface SidecarIndex {
  /** The Sidecar for a workload of `namespace` with these labels. */
  forWorkload(namespace: string, labels: Readonly<Record<string, string>>): Sidecar | undefined;
  /** Keys (`sidecar:<ns>/<name>`) of every selecting Sidecar of `namespace` that matches the labels. */
  selectingKeys(namespace: string, labels: Readonly<Record<string, string>>): string[];
  /** The Sidecars that select workloads by label, with their keys (for placing nodes into classes). */
  readonly selectors: readonly {
    readonly namespace: string;
    readonly selector: Readonly<Record<string, string>>;
    readonly key: string;
  }[];
}

export const sidecarKey = (s: Sidecar): string => `sidecar:${s.meta.namespace}/${s.meta.name}`;

const oldestFirst = (a: Sidecar, b: Sidecar): number => {
  const ta = a.creationTimestamp ?? '';
  const tb = b.creationTimestamp ?? '';
  if (ta !== tb) return ta < tb ? -1 : 1;
  return a.meta.name < b.meta.name ? -1 : a.meta.name > b.meta.name ? 1 : 0;
};

export function indexSidecars(sidecars: readonly Sidecar[], rootNamespace: string): SidecarIndex {
  const selecting = new Map<string, Sidecar[]>();
  const namespaceWide = new Map<string, Sidecar>();
  for (const s of [...sidecars].sort(oldestFirst)) {
    const ns = s.meta.namespace;
    if (s.spec.workloadSelector) {
      const list = selecting.get(ns) ?? [];
      list.push(s);
      selecting.set(ns, list);
    } else if (!namespaceWide.has(ns)) namespaceWide.set(ns, s);
  }
  const rootDefault = namespaceWide.get(rootNamespace);
  const matching = (namespace: string, labels: Readonly<Record<string, string>>): Sidecar[] =>
    (selecting.get(namespace) ?? []).filter((s) => selects(s.spec.workloadSelector?.labels ?? {}, labels));
  return {
    forWorkload: (namespace, labels) => matching(namespace, labels)[0] ?? namespaceWide.get(namespace) ?? rootDefault,
    selectingKeys: (namespace, labels) => matching(namespace, labels).map(sidecarKey).sort(),
    selectors: [...selecting.values()].flat().map((s) => ({
      namespace: s.meta.namespace,
      selector: s.spec.workloadSelector?.labels ?? {},
      key: sidecarKey(s),
    })),
  };
}

/** No Sidecar anywhere: every workload sees what exportTo lets it see. */
export const NO_SIDECARS: SidecarIndex = indexSidecars([], '');

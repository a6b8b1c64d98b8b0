/**
 * Which EnvoyFilters a proxy gets, in which order, with their patch values made messages: istiod's
 * PushContext.EnvoyFilters. A proxy gets the root namespace's EnvoyFilters and its own namespace's
 * (ShouldAttachPolicy: without a workloadSelector every proxy of the namespace — of every
 * namespace for the root's —, with one those whose labels it selects), sorted by priority, the root
 * namespace's first, then creation time, then `name.namespace`.
 *
 * Label-selected EnvoyFilters split proxy classes, as label-selected security policies do: a
 * class's key `envoyfilter:<ns>/<name>` (`selecting`), and the relay places proxies by the same
 * selectors (`selectors`).
 */
import { objectAt, type Diagnostics } from '../../model/diagnostics.js';
import type { EnvoyFilter, EnvoyFilterApplyTo, EnvoyFilterPatch } from '../../model/envoy-filter.js';
import { GATEWAY_NAME_LABEL } from '../../model/gateway-api.js';
import { isGatewayRef } from '../../model/telemetry.js';
import { selects } from '../../proxy-class/class-id.js';
import { messageFromJson } from '../../xds/json-message.js';
import type { Refusals } from './groups.js';
import type { ResolvedPatch } from './types.js';

/** The message type a patch value of each `applyTo` is (istiod's BuildXDSObjectFromStruct). */
export const PATCH_VALUE_TYPE: Readonly<Record<EnvoyFilterApplyTo, string>> = {
  LISTENER: 'envoy.config.listener.v3.Listener',
  FILTER_CHAIN: 'envoy.config.listener.v3.FilterChain',
  NETWORK_FILTER: 'envoy.config.listener.v3.Filter',
  HTTP_FILTER: 'envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter',
  ROUTE_CONFIGURATION: 'envoy.config.route.v3.RouteConfiguration',
  VIRTUAL_HOST: 'envoy.config.route.v3.VirtualHost',
  HTTP_ROUTE: 'envoy.config.route.v3.Route',
  CLUSTER: 'envoy.config.cluster.v3.Cluster',
  LISTENER_FILTER: 'envoy.config.listener.v3.ListenerFilter',
};

export const envoyFilterKey = (f: EnvoyFilter): string => `envoyfilter:${f.meta.namespace}/${f.meta.name}`;

/** A label-selected EnvoyFilter's selector in one namespace (the root namespace's: one per namespace). */
export interface EnvoyFilterSelector {
  readonly namespace: string;
  readonly selector: Readonly<Record<string, string>>;
  readonly key: string;
}

export interface EnvoyFilterIndex {
  /** Whether the mesh has EnvoyFilters with patches to apply. */
  readonly any: boolean;
  /** Keys of the label-selected EnvoyFilters that select a workload of `namespace` with `labels`, sorted. */
  selecting(namespace: string, labels: Readonly<Record<string, string>>): readonly string[];
  readonly selectors: readonly EnvoyFilterSelector[];
  /** The patches a proxy of `namespace` gets whose class holds the label-selected EnvoyFilters `keys`, in istiod's order. */
  patchesFor(namespace: string, keys: readonly string[]): readonly ResolvedPatch[];
  /** Reports the EnvoyFilters left out for some classes because their patches broke the config (groups.ts). */
  readonly reportRefusals: (refusals: Refusals) => void;
  /** Reports a patch istiod would give up on (its recovered panic), once per patch and message. */
  readonly reportPanic: (patch: ResolvedPatch, message: string) => void;
}

const NO_KEYS: readonly string[] = Object.freeze([]);
/** Problems said per patch value. */
const MAX_SAID = 8;
const NO_PATCHES: readonly ResolvedPatch[] = Object.freeze([]);

export const NO_ENVOY_FILTERS: EnvoyFilterIndex = {
  any: false,
  selecting: () => NO_KEYS,
  selectors: [],
  patchesFor: () => NO_PATCHES,
  reportPanic: () => undefined,
  reportRefusals: () => undefined,
};

const where = (f: EnvoyFilter, field: string) => objectAt('EnvoyFilter', f, field);

/**
 * The patches of one EnvoyFilter the compile applies, their values made messages. A patch whose
 * value does not convert is left out with an error (istiod's convertToEnvoyFilterWrapper skips it);
 * one that matches on the proxy's version or metadata is left out with a warning: meshsnap compiles
 * before it knows its proxies.
 */
function resolvePatches(f: EnvoyFilter, diags: Diagnostics): ResolvedPatch[] {
  const source = `${f.meta.namespace}/${f.meta.name}`;
  const out: ResolvedPatch[] = [];
  for (const p of f.configPatches) {
    const at = `spec.configPatches[${p.index}]`;
    if (p.proxy) {
      diags.warn({
        ...where(f, `${at}.match.proxy`),
        code: 'unsupported-field',
        message:
          'match.proxy (proxyVersion, metadata) is not applied: meshsnap compiles before it knows its proxies; the patch is left out',
      });
      continue;
    }
    const resolved = resolveValue(f, p, at, diags);
    if (resolved) out.push({ ...resolved, source });
  }
  return out;
}

function resolveValue(
  f: EnvoyFilter,
  p: EnvoyFilterPatch,
  at: string,
  diags: Diagnostics,
): Omit<ResolvedPatch, 'source'> | undefined {
  const { value, ...rest } = p;
  if (p.operation === 'REMOVE' || value === undefined) {
    if (p.operation !== 'REMOVE') {
      diags.error({
        ...where(f, `${at}.patch.value`),
        code: 'invalid-field',
        message: `a ${p.operation} patch needs a value; the patch is left out`,
      });
      return undefined;
    }
    return rest;
  }
  // istiod reads patch values leniently (BuildXDSObjectFromStruct, strict=false): unknown fields are
  // dropped, its webhook only warns. So does meshsnap, with a warning for each.
  const converted = messageFromJson(PATCH_VALUE_TYPE[p.applyTo], value, '', { allowUnknownFields: true });
  if (!converted.ok) {
    for (const problem of converted.problems.slice(0, MAX_SAID))
      diags.error({
        ...where(f, problem.path ? `${at}.patch.value.${problem.path}` : `${at}.patch.value`),
        code: 'invalid-field',
        message: `${problem.message} (as ${PATCH_VALUE_TYPE[p.applyTo]}); the patch is left out`,
      });
    return undefined;
  }
  for (const ignored of converted.ignored?.slice(0, MAX_SAID) ?? [])
    diags.warn({
      ...where(f, `${at}.patch.value.${ignored.path}`),
      code: 'unknown-field',
      message: `${ignored.message}: not in meshsnap's Envoy API, so left out of the patch (istiod drops unknown fields too; its webhook warns)`,
    });
  return { ...rest, value: converted.message };
}

/** istiod's order of the EnvoyFilters one proxy gets. */
function istiodOrder(root: string): (a: EnvoyFilter, b: EnvoyFilter) => number {
  return (a, b) => {
    if (a.priority !== b.priority) return a.priority - b.priority;
    const aRoot = a.meta.namespace === root;
    const bRoot = b.meta.namespace === root;
    if (a.meta.namespace !== b.meta.namespace && aRoot !== bRoot) return aRoot ? -1 : 1;
    const at = a.creationTimestamp ?? '';
    const bt = b.creationTimestamp ?? '';
    // RFC 3339 in UTC, as the API server writes it: the text orders as the time; absent is oldest.
    if (at !== bt) return at < bt ? -1 : 1;
    const an = `${a.meta.name}.${a.meta.namespace}`;
    const bn = `${b.meta.name}.${b.meta.namespace}`;
    return an < bn ? -1 : an > bn ? 1 : 0;
  };
}

export function indexEnvoyFilters(
  filters: readonly EnvoyFilter[],
  rootNamespace: string,
  namespaces: readonly string[],
  diags: Diagnostics,
): EnvoyFilterIndex {
  const patches = new Map<EnvoyFilter, ResolvedPatch[]>();
  const wide = new Map<string, EnvoyFilter[]>();
  const byKey = new Map<string, EnvoyFilter>();
  const selectors: EnvoyFilterSelector[] = [];
  for (const f of filters) {
    const ns = f.meta.namespace;
    const key = envoyFilterKey(f);
    if (f.targetRefs?.length) {
      // istiod's ShouldAttachPolicy: a targetRef to a Gateway API Gateway of its namespace attaches
      // it to that gateway's pods (labelled with its name); other kinds attach to waypoints only.
      const names = [...new Set(f.targetRefs.filter(isGatewayRef).map((r) => r.name))].sort();
      if (names.length === 0) continue;
      for (const name of names) selectors.push({ namespace: ns, selector: { [GATEWAY_NAME_LABEL]: name }, key });
    } else if (f.workloadLabels) {
      for (const namespace of ns === rootNamespace ? namespaces : [ns])
        selectors.push({ namespace, selector: f.workloadLabels, key });
    } else {
      const list = wide.get(ns);
      if (list) list.push(f);
      else wide.set(ns, [f]);
    }
    if (f.targetRefs?.length || f.workloadLabels) byKey.set(key, f);
    patches.set(f, resolvePatches(f, diags));
  }
  if (patches.size === 0) return NO_ENVOY_FILTERS;
  const applied = [...patches.keys()];
  selectors.sort((a, b) => cmp(a.key, b.key) || cmp(a.namespace, b.namespace));
  const selectorsByNamespace = new Map<string, EnvoyFilterSelector[]>();
  for (const s of selectors) {
    const list = selectorsByNamespace.get(s.namespace);
    if (list) list.push(s);
    else selectorsByNamespace.set(s.namespace, [s]);
  }

  const order = istiodOrder(rootNamespace);
  const bySource = new Map(applied.map((f) => [`${f.meta.namespace}/${f.meta.name}`, f]));
  const reported = new Set<string>();
  const cache = new Map<string, readonly ResolvedPatch[]>();
  return {
    any: [...patches.values()].some((list) => list.length > 0),
    selectors,
    selecting(namespace, labels) {
      const candidates = selectorsByNamespace.get(namespace);
      if (!candidates) return NO_KEYS;
      const keys = candidates.filter((s) => selects(s.selector, labels)).map((s) => s.key);
      return keys.length ? [...new Set(keys)].sort() : NO_KEYS;
    },
    reportRefusals(refusals) {
      for (const [source, { classes, problems }] of [...refusals].sort(([a], [b]) => cmp(a, b))) {
        const f = bySource.get(source);
        if (!f) continue;
        const sample = classes.slice(0, 3).join(', ') + (classes.length > 3 ? ` and ${classes.length - 3} more` : '');
        diags.error({
          ...where(f, 'spec.configPatches'),
          code: 'envoyfilter-not-applied',
          message: `its patches would make the config of ${sample} invalid (${problems.join('; ')}); Envoy would reject it or fail its traffic, so meshsnap leaves this EnvoyFilter out for those proxies`,
        });
      }
    },
    reportPanic(patch, message) {
      const f = bySource.get(patch.source);
      const once = `${patch.source}#${patch.index}|${message}`;
      if (!f || reported.has(once)) return;
      reported.add(once);
      diags.warn({
        ...where(f, `spec.configPatches[${patch.index}].patch.value`),
        code: 'envoyfilter-not-applied',
        message: `${message}; istiod gives up on the patches of this resource, and so does meshsnap`,
      });
    },
    patchesFor(namespace, keys) {
      const cacheKey = `${namespace}|${keys.join(',')}`;
      const hit = cache.get(cacheKey);
      if (hit) return hit;
      const matched = [
        ...(wide.get(rootNamespace) ?? []),
        ...(namespace === rootNamespace ? [] : (wide.get(namespace) ?? [])),
        ...keys.map((k) => byKey.get(k)).filter((f): f is EnvoyFilter => f !== undefined),
      ].sort(order);
      const list = matched.flatMap((f) => patches.get(f) ?? []);
      const out = list.length ? Object.freeze(list) : NO_PATCHES;
      cache.set(cacheKey, out);
      return out;
    },
  };
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

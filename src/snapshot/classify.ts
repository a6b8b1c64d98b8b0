/**
 * Places a connecting proxy into a proxy class of a snapshot, and lists the resources of a class.
 *
 * Proxyless gRPC clients (GENERATOR=grpc) get `grpc/<ns>`. A sidecar (a pod's, or a VM's of a
 * WorkloadEntry) gets the class of the services in its namespace whose selector (a Service's, or a
 * ServiceEntry's workloadSelector) matches its LABELS, and of the security policies that
 * select it by label, named as the compiler names it. When the compiler has no such class (e.g.
 * the pod appeared after the compile) it falls back to the namespace's selector-less class
 * `sidecar/<ns>/_` — unless a policy selects the node: that class lacks the policy, and serving it
 * would silently drop the node's protection, so the node is refused until a compile knows it. A
 * gateway (`router~…`) gets its router class (classifyRouter).
 */
import type { ClassSelector, GatewaySelectorRef, ProxyClass } from '../compile/types.js';
import {
  groupsForLocality,
  isLocalityBaseGroup,
  localityClassId,
  parseLocalityClassId,
  proxyLocalityKey,
} from '../proxy-class/locality.js';
import {
  groupsForNode,
  isNodeBaseGroup,
  isNodeName,
  nodeClassId,
  parseNodeClassId,
} from '../proxy-class/node-local.js';
import { appliesToRouters, classServiceName, routerClassId, selects, sidecarClassId } from '../proxy-class/class-id.js';
import { parseProxyNode, type ProxyNode } from '../proxy-class/node-id.js';
import { XDS_TYPES, type XdsType } from '../xds/type-urls.js';
import type { SnapshotContent } from './content.js';

export interface NodeIdentity {
  readonly id: string;
  readonly metadata?: Readonly<Record<string, unknown>>;
  /** The Envoy node's `locality` (`subZone` for its `sub_zone`). */
  readonly locality?: { readonly region: string; readonly zone: string; readonly subZone: string };
}

export type Classification =
  | { readonly ok: true; readonly classId: string; readonly node: ProxyNode }
  | { readonly ok: false; readonly reason: string };

/** Classes by id, built once per classes list (a relay classifies every stream against the same one). */
const byId = new WeakMap<readonly ProxyClass[], ReadonlyMap<string, ProxyClass>>();

function classesById(list: readonly ProxyClass[]): ReadonlyMap<string, ProxyClass> {
  let classes = byId.get(list);
  if (!classes) byId.set(list, (classes = new Map(list.map((c) => [c.id, c]))));
  return classes;
}

export function classifyNode(content: SnapshotContent, identity: NodeIdentity): Classification {
  const parsed = parseProxyNode(identity.id, identity.metadata ?? {}, identity.locality);
  return parsed.ok ? classifyParsedNode(content, identity, parsed.node) : parsed;
}

/**
 * classifyNode of a node already parsed (a relay parses each stream's node once, and places it at
 * every switch). A class whose assignments depend on the proxy's locality is served as
 * `<class>@<region>/<zone>/<subzone>` when the snapshot has that locality (../proxy-class/locality.ts);
 * a proxy of a locality it does not know gets the class itself (the assignments for no locality).
 * A class with node-local assignments (../proxy-class/node-local.ts) is then served as
 * `…#<node>` for a proxy whose NODE_NAME is a node of the snapshot; a proxy of no known node gets
 * the assignments for no node.
 */
export function classifyParsedNode(content: SnapshotContent, identity: NodeIdentity, node: ProxyNode): Classification {
  const placed = classifyByLabels(content, identity, node);
  if (!placed.ok) return placed;
  const cls = classesById(content.classes).get(placed.classId);
  if (!cls) return placed;
  let classId = placed.classId;
  if (cls.groups.some(isLocalityBaseGroup)) {
    const key = proxyLocalityKey(node, nodeLocalities(content.selectors));
    if (key !== undefined && hasLocality(content, cls, key)) classId = localityClassId(classId, key);
  }
  const nodeName = node.nodeName;
  if (nodeName !== undefined && cls.groups.some(isNodeBaseGroup) && hasNode(content, cls, nodeName))
    classId = nodeClassId(classId, nodeName);
  return classId === placed.classId ? placed : { ok: true, classId, node };
}

/**
 * Per snapshot and mark (`@`: localities, `#`: nodes): each base group (`G@`, `G#`) → the keys it
 * has a group for (`G@<locality>`, `G#<node>`). A key holds no mark; a group id before it may.
 */
const variantIndexes = new WeakMap<SnapshotContent['groups'], Map<string, ReadonlyMap<string, ReadonlySet<string>>>>();

function variantIndex(content: SnapshotContent, mark: '@' | '#'): ReadonlyMap<string, ReadonlySet<string>> {
  let byMark = variantIndexes.get(content.groups);
  if (!byMark) variantIndexes.set(content.groups, (byMark = new Map()));
  let index = byMark.get(mark);
  if (!index) {
    const m = new Map<string, Set<string>>();
    for (const id of Object.keys(content.groups)) {
      const at = id.lastIndexOf(mark);
      if (at < 0 || at === id.length - 1) continue;
      const base = id.slice(0, at + 1);
      if (content.groups[base] === undefined) continue;
      let keys = m.get(base);
      if (!keys) m.set(base, (keys = new Set()));
      keys.add(id.slice(at + 1));
    }
    byMark.set(mark, (index = m));
  }
  return index;
}

/** Whether each of a class's `mark` groups has a variant for `key`. */
function hasVariant(content: SnapshotContent, cls: ProxyClass, mark: '@' | '#', key: string): boolean {
  const index = variantIndex(content, mark);
  const bases = cls.groups.filter((g) => g.endsWith(mark));
  return bases.length > 0 && bases.every((b) => index.get(b)?.has(key) === true);
}

/** Whether a class has variants for a locality. */
const hasLocality = (content: SnapshotContent, cls: ProxyClass, key: string): boolean =>
  hasVariant(content, cls, '@', key);

/** Whether a class has variants for a node (a name of a node of the snapshot). */
const hasNode = (content: SnapshotContent, cls: ProxyClass, node: string): boolean =>
  isNodeName(node) && hasVariant(content, cls, '#', node);

/** Node name → locality key, from the snapshot's node selectors. */
const nodesBySelectors = new WeakMap<readonly ClassSelector[], ReadonlyMap<string, string>>();

function nodeLocalities(selectors: readonly ClassSelector[]): ReadonlyMap<string, string> {
  let nodes = nodesBySelectors.get(selectors);
  if (!nodes) {
    const m = new Map<string, string>();
    for (const s of selectors) if (s.node !== undefined && s.locality !== undefined) m.set(s.node, s.locality);
    nodesBySelectors.set(selectors, (nodes = m));
  }
  return nodes;
}

/**
 * The class a class id names, a locality class id (`<class>@<locality>`) and a node class id
 * (`<class>#<node>`, `<class>@<locality>#<node>`) included: the class with its locality's and its
 * node's groups. Undefined when the snapshot has no such class.
 */
export function classById(content: SnapshotContent, classId: string): ProxyClass | undefined {
  const classes = classesById(content.classes);
  const plain = classes.get(classId);
  if (plain) return plain;
  const onNode = parseNodeClassId(classId);
  const id = onNode ? onNode.classId : classId;
  let cls = classes.get(id);
  let groups = cls?.groups;
  if (!cls) {
    const located = parseLocalityClassId(id);
    if (!located) return undefined;
    cls = classes.get(located.classId);
    if (!cls || !hasLocality(content, cls, located.key)) return undefined;
    groups = groupsForLocality(cls.groups, located.key);
  }
  if (onNode) {
    if (!hasNode(content, cls, onNode.node)) return undefined;
    groups = groupsForNode(groups as readonly string[], onNode.node);
  }
  return { ...cls, id: classId, groups: groups as string[] };
}

function classifyByLabels(content: SnapshotContent, identity: NodeIdentity, node: ProxyNode): Classification {
  const classes = classesById(content.classes);
  const ns = node.namespace;
  const unknownNamespace = (): Classification => ({
    ok: false,
    reason: `node ${identity.id}: namespace ${JSON.stringify(ns)} is not in the mesh snapshot`,
  });

  if (node.generator === 'grpc') {
    const classId = `grpc/${ns}`;
    return classes.has(classId) ? { ok: true, classId, node } : unknownNamespace();
  }
  if (node.generator !== undefined)
    return { ok: false, reason: `node ${identity.id}: unsupported GENERATOR ${JSON.stringify(node.generator)}` };
  const matching = content.selectors.filter(
    (s) => s.namespace === ns && Object.keys(s.selector).length > 0 && selects(s.selector, node.labels),
  );
  // Services (Kubernetes Services and ServiceEntries' workloadSelectors) in hostname order, by class name.
  const selecting = matching
    .filter((s) => s.policy === undefined)
    .sort((a, b) => (a.hostname < b.hostname ? -1 : a.hostname > b.hostname ? 1 : 0))
    .map((s) => classServiceName(s.hostname, s.serviceEntry === true));
  const policies = matching.flatMap((s) => (s.policy === undefined ? [] : [s.policy]));
  if (node.type === 'router')
    return classifyRouter(content, identity, node, selecting, policies.filter(appliesToRouters));
  const exact = sidecarClassId(ns, selecting, policies);
  if (classes.has(exact)) return { ok: true, classId: exact, node };
  if (policies.length > 0)
    return {
      ok: false,
      reason: `node ${identity.id}: selected by ${policies.sort().join(', ')}, but the snapshot has no class ${exact} (its pod is not in the compiled inputs yet)`,
    };
  const fallback = sidecarClassId(ns, []);
  if (classes.has(fallback)) return { ok: true, classId: fallback, node };
  return unknownNamespace();
}

/**
 * A router proxy gets the class of the Gateways (any namespace) whose selector matches its LABELS,
 * the Services of its namespace selecting it and the AuthorizationPolicies/RequestAuthentications
 * selecting it by label, as the compiler named it from the pods it saw (no fallback: a class
 * without the policies would drop the gateway's protection).
 */
function classifyRouter(
  content: SnapshotContent,
  identity: NodeIdentity,
  node: ProxyNode,
  serviceNames: readonly string[],
  policies: readonly string[],
): Classification {
  const gateways = new Map<string, GatewaySelectorRef>();
  for (const c of content.classes)
    if (c.generator === 'router') for (const g of c.gateways ?? []) gateways.set(`${g.namespace}/${g.name}`, g);
  const keys = [...gateways.entries()]
    .filter(([, g]) => g.selector === undefined || selects(g.selector, node.labels))
    .map(([k]) => k)
    .sort();
  const classId = routerClassId(node.namespace, serviceNames, keys, policies);
  if (keys.length && content.classes.some((c) => c.id === classId)) return { ok: true, classId, node };
  return {
    ok: false,
    reason: keys.length
      ? `node ${identity.id}: router class ${classId} is not in the mesh snapshot (no pod with these labels in namespace ${node.namespace} was compiled)`
      : `node ${identity.id}: no Gateway selects a router with labels ${JSON.stringify(node.labels)} (not found in the mesh snapshot)`,
  };
}

/** The resources a class receives, per type: name → object digest (names sorted). Undefined for an unknown class. */
export function resourcesForClass(
  content: SnapshotContent,
  classId: string,
): Record<XdsType, Map<string, string>> | undefined {
  const cls = classById(content, classId);
  if (!cls) return undefined;
  const out = {} as Record<XdsType, Map<string, string>>;
  for (const type of XDS_TYPES) {
    const merged: [string, string][] = [];
    for (const g of cls.groups) {
      const table = content.groups[g]?.[type];
      if (table) for (const [name, digest] of Object.entries(table)) merged.push([name, digest]);
    }
    merged.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    out[type] = new Map(merged);
  }
  return out;
}

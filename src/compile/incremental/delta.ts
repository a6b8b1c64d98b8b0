/**
 * Building and applying CompileDeltas (types.ts).
 *
 * A recomputed resource goes into the delta only when its encoding differs from the current one:
 * most endpoint events change a ClusterLoadAssignment and nothing else, and a resource that did
 * not change keeps its message object (the snapshot encoder's cache then skips it).
 */
import { encodeMessage, type RouteConfiguration, type VirtualHost } from '../../xds/proto.js';
import { XDS_TYPE_NAME, XDS_TYPES, type XdsType } from '../../xds/type-urls.js';
import {
  emptyTable,
  type ClassSelector,
  type CompileDelta,
  type CompileOutput,
  type GroupId,
  type ProxyClass,
  type ResourceChanges,
  type ResourceMessages,
  type ResourceTable,
} from '../types.js';

const encodings = new WeakMap<object, Uint8Array>();

function encoded(typeName: string, message: object): Uint8Array {
  let bytes = encodings.get(message);
  if (!bytes) {
    bytes = encodeMessage(typeName, message);
    encodings.set(message, bytes);
  }
  return bytes;
}

const VIRTUAL_HOST = 'envoy.config.route.v3.VirtualHost';

/**
 * Whether two resources encode the same. Route configurations are compared virtual host by virtual
 * host (`hosts`): a sidecar's holds every service of its port, and every namespace's config holds
 * the same virtual host objects, so a VirtualService change at 10k services compared ~200 configs
 * of ~10k hosts each whole (walked to their first difference, then encoded whole: ~30 s and ~2 GB
 * of encodings); host by host, each pair of hosts is compared once and only a changed host is encoded.
 */
export function sameResource(type: XdsType, a: object, b: object, hosts = new VirtualHostVerdicts()): boolean {
  if (a === b) return true;
  if (type === 'routes') return sameRouteConfiguration(a as RouteConfiguration, b as RouteConfiguration, hosts);
  return sameValue(a, b) || sameEncoding(XDS_TYPE_NAME[type], a, b);
}

function sameEncoding(typeName: string, a: object, b: object): boolean {
  return sameBytes(encoded(typeName, a), encoded(typeName, b));
}

function sameBytes(x: Uint8Array, y: Uint8Array): boolean {
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

/**
 * A RouteConfiguration is written as its fields in number order, `virtual_hosts` (2) each as its
 * own length-delimited entry: two configs encode the same exactly when their other fields do and
 * their virtual hosts do, one by one.
 */
function sameRouteConfiguration(a: RouteConfiguration, b: RouteConfiguration, hosts: VirtualHostVerdicts): boolean {
  const va = a.virtual_hosts ?? [];
  const vb = b.virtual_hosts ?? [];
  if (va.length !== vb.length) return false;
  const { virtual_hosts: _a, ...restA } = a;
  const { virtual_hosts: _b, ...restB } = b;
  if (!sameValue(restA, restB)) {
    const typeName = XDS_TYPE_NAME.routes;
    if (!sameBytes(encodeMessage(typeName, restA), encodeMessage(typeName, restB))) return false;
  }
  for (let i = 0; i < va.length; i++) if (!hosts.same(va[i] as object, vb[i] as object)) return false;
  return true;
}

/**
 * What one diff found of pairs of virtual hosts (old, new): the same host objects recur in every
 * namespace's route config, so each pair is compared once.
 */
export class VirtualHostVerdicts {
  private readonly verdicts = new WeakMap<object, { readonly other: object; readonly same: boolean }>();

  same(a: object, b: object): boolean {
    if (a === b) return true;
    const known = this.verdicts.get(b);
    if (known?.other === a) return known.same;
    const same = sameValue(a, b) || sameEncoding(VIRTUAL_HOST, a, b);
    this.verdicts.set(b, { other: a, same });
    return same;
  }

  /**
   * `after` with each virtual host that encodes as `before`'s host of the same name replaced by
   * that host (the same bytes, so the same config): what reads the config next (the snapshot's
   * route chunks, the consistency index's parts) finds the objects it already knows, and only a
   * changed host is new. Hosts are matched in order; a host added or dropped here and there (a new
   * Service) shifts the positions, one at a time.
   */
  keepEqual(before: RouteConfiguration, after: RouteConfiguration): RouteConfiguration {
    const va = before.virtual_hosts ?? [];
    const vb = after.virtual_hosts ?? [];
    let kept: VirtualHost[] | undefined;
    let i = 0;
    for (let j = 0; j < vb.length; j++) {
      const h = vb[j] as VirtualHost;
      let k = i;
      if (va[k]?.name !== h.name && va[k + 1]?.name === h.name) k++;
      const old = va[k];
      if (old === undefined || old.name !== h.name) continue; // new here
      i = k + 1;
      if (old !== h && this.same(old, h)) (kept ??= [...vb])[j] = old;
    }
    return kept ? { ...after, virtual_hosts: kept } : after;
  }
}

/**
 * Structural equality of message values: same prototypes, own keys in the same order (map fields
 * are encoded in insertion order), equal arrays, bytes and primitives. Equal values encode to the
 * same bytes, so a recomputed resource that did not change (an endpoint move's clusters) is found
 * without encoding it; unequal ones are compared by their encodings (a default value set or left
 * out encodes the same).
 */
function sameValue(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true; // not ===: 0 and -0 encode differently as doubles
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  if (ArrayBuffer.isView(a)) {
    const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
    const y = b as ArrayBufferView;
    if (x.byteLength !== y.byteLength) return false;
    const z = new Uint8Array(y.buffer, y.byteOffset, y.byteLength);
    for (let i = 0; i < x.length; i++) if (x[i] !== z[i]) return false;
    return true;
  }
  if (Array.isArray(a)) {
    const y = b as unknown[];
    if (a.length !== y.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameValue(a[i], y[i])) return false;
    return true;
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    const k = ka[i] as string;
    if (k !== kb[i] || !sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  }
  return true;
}

/** Collects changes against the live tables it is given, and applies them to those tables as it goes. */
export class DeltaBuilder {
  readonly delta: CompileDelta = {};
  private readonly hosts = new VirtualHostVerdicts();

  constructor(private readonly tables: ReadonlyMap<GroupId, ResourceTable>) {}

  /** Sets `name` in a group to `message` unless it is already encoded the same. */
  upsert<T extends XdsType>(group: GroupId, type: T, name: string, message: ResourceMessages[T]): void {
    const table = this.table(group);
    const current = table[type].get(name);
    if (current !== undefined) {
      if (sameResource(type, current, message, this.hosts)) return;
      if (type === 'routes')
        message = this.hosts.keepEqual(
          current as RouteConfiguration,
          message as RouteConfiguration,
        ) as ResourceMessages[T];
    }
    (table[type] as Map<string, ResourceMessages[T]>).set(name, message);
    const changes = this.changes(group, type);
    changes.deletes.delete(name);
    changes.upserts.set(name, message);
  }

  delete(group: GroupId, type: XdsType, name: string): void {
    const table = this.table(group);
    if (!table[type].delete(name)) return;
    const changes = this.changes(group, type);
    changes.upserts.delete(name);
    changes.deletes.add(name);
  }

  /** Makes a group's `type` hold exactly `next`. */
  replaceAll<T extends XdsType>(group: GroupId, type: T, next: ReadonlyMap<string, ResourceMessages[T]>): void {
    for (const name of [...this.table(group)[type].keys()]) if (!next.has(name)) this.delete(group, type, name);
    for (const [name, m] of next) this.upsert(group, type, name, m);
  }

  get empty(): boolean {
    return Object.keys(this.delta).length === 0;
  }

  private table(group: GroupId): ResourceTable {
    const t = this.tables.get(group);
    if (!t) throw new Error(`incremental compile: no group ${group}`);
    return t;
  }

  private changes<T extends XdsType>(group: GroupId, type: T): ResourceChanges<ResourceMessages[T]> {
    const g = (this.delta[group] ??= {});
    return (g[type] ??= { upserts: new Map(), deletes: new Set() }) as ResourceChanges<ResourceMessages[T]>;
  }
}

/** What a delta changes besides resources (output-diff.ts): absent fields did not change. */
export interface LayoutChange {
  /** Groups no class uses any more. */
  readonly removedGroups?: readonly GroupId[];
  readonly classes?: readonly ProxyClass[];
  readonly selectors?: readonly ClassSelector[];
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The output `delta` (and `layout`, when groups, classes or selectors changed) leads to from
 * `output`, which is left untouched. Tables keep the compiler's name order. Unchanged groups and
 * tables are shared with `output`.
 */
export function applyCompileDelta(
  output: CompileOutput,
  delta: CompileDelta,
  layout: LayoutChange = {},
): CompileOutput {
  const groups = new Map(output.groups);
  for (const id of layout.removedGroups ?? []) groups.delete(id);
  for (const [id, changes] of Object.entries(delta)) {
    const before = groups.get(id) ?? emptyTable();
    const after: ResourceTable = { ...before };
    for (const type of XDS_TYPES) {
      const c = changes[type] as ResourceChanges<object> | undefined;
      if (!c) continue;
      const m = new Map(before[type] as ReadonlyMap<string, object>);
      for (const name of c.deletes) m.delete(name);
      let added = false;
      for (const [name, message] of c.upserts) {
        added ||= !m.has(name);
        m.set(name, message);
      }
      (after as Record<XdsType, Map<string, object>>)[type] = added ? new Map([...m].sort(([a], [b]) => cmp(a, b))) : m;
    }
    groups.set(id, after);
  }
  const sorted = [...groups.keys()].every((k, i, all) => i === 0 || cmp(all[i - 1] as string, k) < 0);
  return {
    groups: sorted ? groups : new Map([...groups].sort(([a], [b]) => cmp(a, b))),
    classes: layout.classes ?? output.classes,
    selectors: layout.selectors ?? output.selectors,
  };
}

/** Deep copies of the tables (not the messages): the incremental compiler's own, mutable view of an output. */
export function copyTables(output: CompileOutput): Map<GroupId, ResourceTable> {
  const out = new Map<GroupId, ResourceTable>();
  for (const [id, t] of output.groups) {
    out.set(id, {
      clusters: new Map(t.clusters),
      endpoints: new Map(t.endpoints),
      listeners: new Map(t.listeners),
      routes: new Map(t.routes),
    });
  }
  return out;
}

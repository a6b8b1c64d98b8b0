/**
 * Snapshot consistency, checked per proxy class (the union of its groups), as go-control-plane's
 * `Consistent()` does per node: no name twice in one type, and every RDS route config, EDS
 * service and cluster that a resource refers to is present. An inconsistent snapshot makes
 * Envoy wait forever for a missing resource (or reject an update), so it is never published.
 *
 * Cost: O(resources + references) once, plus per class O(Σ over its groups of the distinct
 * "holder sets" involved), never O(classes × resources):
 * - every (type, name) gets the set of groups holding it, interned: names held by the same groups
 *   share one holder set;
 * - a reference a group satisfies itself is settled for every class; the others are bucketed per
 *   group by the holder set of their target, and a class checks one bucket with one intersection
 *   of two small sets (the holder set and the class's groups);
 * - references are read per shared part, once per check (a virtual host, a packed filter), and a
 *   route config's virtual hosts by an identity comparison with an earlier config of the same
 *   name: the 100 namespaces × 10k virtual hosts of a 10k mesh cost a comparison each;
 * - a duplicate needs two holders of one name in a class: per class, each group adds one to the
 *   shared holder sets it belongs to, and a set reaching two is a duplicate.
 * `ConsistencyIndex` keeps holders and reverse references so a delta re-checks only the changed
 * names: references from upserted resources, references to deleted names, and new names.
 *
 * Every resource must also be one Envoy accepts (`envoy-rejects`, src/xds/validate/: the protos'
 * protoc-gen-validate rules, Envoy's cross-field rules, RE2): checked per resource, not per class,
 * and once per message object (the validator remembers the clean ones).
 */
import { MeshsnapError } from '../errors.js';
import type { CompileOutput, GroupId, ProxyClass, ResourceTable } from '../compile/types.js';
import type { Diagnostic } from '../model/diagnostics.js';
import { XDS_TYPES, type XdsType } from '../xds/type-urls.js';
import { forgetDomainBases, istioObjectOf, oneCheckValidator, type Validator } from '../xds/validate/index.js';
import { envoyViolations, proxylessOnlyGroups } from './envoy-acceptance.js';
import type { Cluster, RouteConfiguration, VirtualHost } from '../xds/proto.js';
import {
  clusterEndpointsRef,
  resourceRefParts,
  resourceRefs,
  sharedReferences,
  ReferenceReader,
  refsOfParts,
  type RefPart,
} from '../xds/references.js';

export type ConsistencyCode =
  | 'duplicate-name'
  | 'missing-route'
  | 'missing-endpoints'
  | 'missing-cluster'
  | 'unknown-group'
  | 'undecodable-filter'
  | 'envoy-rejects';

export interface ConsistencyProblem {
  /** The proxy class; empty for a problem of the resource itself (`envoy-rejects`), which `group` names. */
  readonly classId: string;
  readonly code: ConsistencyCode;
  /** The resource with the problem (for `unknown-group`: the group id, type omitted). */
  readonly type?: XdsType;
  readonly name: string;
  /** The missing or duplicated name. */
  readonly ref?: string;
  readonly message: string;
  /** `envoy-rejects`: the group holding the resource, the field path inside it, the rule it breaks. */
  readonly group?: GroupId;
  readonly field?: string;
  readonly rule?: string;
  /** `envoy-rejects`: the Istio object behind the field (its `istio.config` provenance path), when known. */
  readonly source?: string;
}

export class InconsistentSnapshotError extends MeshsnapError {
  override readonly name = 'InconsistentSnapshotError';
  constructor(readonly problems: readonly ConsistencyProblem[]) {
    const shown = problems.slice(0, 20).map((p) => `  ${p.message}`);
    if (problems.length > shown.length) shown.push(`  … and ${problems.length - shown.length} more`);
    super(
      'internal',
      `inconsistent snapshot (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n${shown.join('\n')}`,
    );
  }

  /** The resources Envoy would reject, as error diagnostics naming the Istio object behind each (when known). */
  get diagnostics(): Diagnostic[] {
    return this.problems.filter((p) => p.code === 'envoy-rejects').map(envoyDiagnostic);
  }
}

function envoyDiagnostic(p: ConsistencyProblem): Diagnostic {
  const object = istioObjectOf(p.source);
  return { severity: 'error', code: 'envoy-rejects', message: p.message, ...(object ?? {}) };
}

type RefKind = 'routes' | 'endpoints' | 'clusters';
const REF_KINDS: readonly RefKind[] = ['routes', 'endpoints', 'clusters'];
const MISSING: Record<RefKind, { code: ConsistencyCode; what: string }> = {
  routes: { code: 'missing-route', what: 'route config' },
  endpoints: { code: 'missing-endpoints', what: 'ClusterLoadAssignment' },
  clusters: { code: 'missing-cluster', what: 'cluster' },
};
const SINGULAR: Record<XdsType, string> = {
  clusters: 'cluster',
  endpoints: 'ClusterLoadAssignment',
  listeners: 'listener',
  routes: 'route config',
};
const isRefKind = (t: XdsType): t is RefKind => t !== 'listeners';

interface Ref {
  readonly type: XdsType;
  readonly name: string;
  readonly ref: string;
}

const missing = (classId: string, kind: RefKind, r: Ref): ConsistencyProblem => ({
  classId,
  code: MISSING[kind].code,
  type: r.type,
  name: r.name,
  ref: r.ref,
  message: `class ${classId}: ${SINGULAR[r.type]} ${r.name} refers to ${MISSING[kind].what} ${JSON.stringify(r.ref)}, which the class does not have`,
});
const duplicate = (classId: string, type: XdsType, name: string, here: readonly GroupId[]): ConsistencyProblem => ({
  classId,
  code: 'duplicate-name',
  type,
  name,
  ref: name,
  message: `class ${classId}: ${SINGULAR[type]} ${name} is defined in several groups (${here.join(', ')})`,
});
const undecodable = (classId: string, r: Ref): ConsistencyProblem => ({
  classId,
  code: 'undecodable-filter',
  type: r.type,
  name: r.name,
  ref: r.ref,
  message: `class ${classId}: ${SINGULAR[r.type]} ${r.name} has an undecodable ${r.ref}`,
});

/** The problems of one resource Envoy would reject; `proxyless`: only gRPC clients load it. */
export function envoyProblems(
  group: GroupId,
  type: XdsType,
  name: string,
  message: object,
  proxyless: boolean,
  shared?: Set<object>,
  validator?: Validator,
): ConsistencyProblem[] {
  const violations = envoyViolations(type, message, proxyless, shared, validator);
  if (violations.length === 0) return [];
  return violations.map((v) => {
    const object = istioObjectOf(v.source);
    const from = object ? `, from ${object.kind} ${object.namespace}/${object.name}` : '';
    return {
      classId: '',
      code: 'envoy-rejects',
      type,
      name,
      group,
      field: v.path,
      rule: v.rule,
      ...(v.source ? { source: v.source } : {}),
      message: `${SINGULAR[type]} ${name} (group ${group}${from}): ${v.path || '(top)'}: ${v.message} [${v.rule}]; ${proxyless ? 'a gRPC client' : 'Envoy'} would reject it`,
    };
  });
}

const unknownGroup = (classId: string, g: GroupId): ConsistencyProblem => ({
  classId,
  code: 'unknown-group',
  name: g,
  message: `class ${classId}: group ${g} does not exist`,
});

/** Whether two sets meet, iterating the smaller. */
function meets(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  for (const x of small) if (large.has(x)) return true;
  return false;
}

/**
 * The groups holding one (type, name): the group id for the usual single holder, else the list in
 * output order; replaced by their interned holder set once that is looked up.
 */
type Holders = GroupId | GroupId[] | HolderSet;

interface HolderSet {
  readonly id: number;
  readonly list: readonly GroupId[];
  readonly members: ReadonlySet<GroupId>;
  /** The target of references of each kind to names these groups hold (made when first needed). */
  readonly targets: Partial<Record<RefKind, Target>>;
}

/** A resource with references its group does not satisfy (one object per resource, not per reference). */
interface Owner {
  readonly type: XdsType;
  readonly name: string;
  readonly message: object;
}

/**
 * Where references lead: a kind and the holder set of the names (undefined: no group has them).
 * One object per (kind, holder set) in a check.
 */
interface Target {
  readonly id: number;
  readonly kind: RefKind;
  readonly holders: HolderSet | undefined;
  /** `[this]`: the target list of references that all lead here (nearly every part's). */
  readonly alone: readonly Target[];
  /** The group whose resources are being bucketed, and this target's bucket in it (null: the group satisfies it). */
  group: GroupId | undefined;
  bucket: Bucket | null;
}

interface Bucket {
  readonly kind: RefKind;
  /** Holder set of the targets; undefined: no group has them. */
  readonly holders: HolderSet | undefined;
  /**
   * The resources with references into this holder set, each once. The references themselves are
   * looked up again only for a problem: a large mesh has millions of them, nearly all satisfied.
   */
  readonly owners: Owner[];
}

const NO_TARGETS: readonly Target[] = [];
/** Route configs with fewer virtual hosts are read host by host (a proxyless client's: one each). */
const MIN_BASIS_HOSTS = 64;

/**
 * Every problem of `output`. `references`: the reader of its references; the shared one (the
 * default) remembers them for later checks of the same messages, one of its own
 * (`new ReferenceReader()`) lets them go with this check, for an output checked once.
 */
export function checkConsistency(
  output: CompileOutput,
  references: ReferenceReader = sharedReferences(),
): ConsistencyProblem[] {
  const problems = referenceProblems(output, references);
  for (const p of envoyRejections(output)) problems.push(p);
  return problems.sort(compareProblems);
}

/**
 * assertConsistent for an output checked once (the one-shot build): its references are read by a
 * reader of its own, and `between`, when given, runs after the references are checked and before
 * the Envoy check, when the reader and the reference index have just died (a full collection
 * there keeps a process's peak memory down: README, Benchmarks). Not when problems were found.
 * Envoy's rules are checked with a validator of its own (oneCheckValidator), whose memory of the
 * messages dies with the check: a full build's messages are new ones, which no later check meets
 * again (the watcher's incremental rounds check their deltas with the process's validator).
 */
export function assertConsistentOnce(output: CompileOutput, between?: () => void): void {
  const problems = referenceProblemsAlone(output);
  if (problems.length === 0) between?.();
  for (const p of envoyRejectionsAlone(output)) problems.push(p);
  if (problems.length) throw new InconsistentSnapshotError(problems.sort(compareProblems));
}

/**
 * envoyRejections with a validator made in a frame of its own (see referenceProblemsAlone); the
 * domain check's bases (which hold the sidecar configs' virtual hosts) are forgotten with it.
 */
function envoyRejectionsAlone(output: CompileOutput): ConsistencyProblem[] {
  const problems = envoyRejections(output, oneCheckValidator());
  forgetDomainBases();
  return problems;
}

/**
 * referenceProblems with a reader made in a frame of its own: an interpreted frame keeps every
 * value it has loaded until it returns, so the reader goes when this returns. It takes the packed
 * filters' references the shared reader already has (an EnvoyFilter copy's, read by the compile).
 */
function referenceProblemsAlone(output: CompileOutput): ConsistencyProblem[] {
  return referenceProblems(output, new ReferenceReader(sharedReferences()));
}

/** Every problem of `output` but those of Envoy's rules (envoyRejections), unsorted. */
function referenceProblems(output: CompileOutput, references: ReferenceReader): ConsistencyProblem[] {
  // (type, name) → groups holding it, in output order; and the names held by more than one group
  const holders = {} as Record<XdsType, Map<string, Holders>>;
  const several = {} as Record<XdsType, string[]>;
  for (const type of XDS_TYPES) ({ index: holders[type], several: several[type] } = holderIndex(output.groups, type));
  // Holder sets interned: one object per distinct list, keyed by its group id (one holder) or by
  // its text (several); a list is replaced in the index by its set.
  const interned = new Map<string, HolderSet>();
  const internedSet = (key: string, list: readonly GroupId[]): HolderSet => {
    let set = interned.get(key);
    if (!set) interned.set(key, (set = { id: interned.size, list, members: new Set(list), targets: {} }));
    return set;
  };
  const holderSet = (type: XdsType, name: string): HolderSet | undefined => {
    const entry = holders[type].get(name);
    if (entry === undefined) return undefined;
    if (typeof entry === 'string') return interned.get(entry) ?? internedSet(entry, [entry]);
    if (!Array.isArray(entry)) return entry;
    const set = internedSet(entry.join('\n'), entry);
    holders[type].set(name, set);
    return set;
  };

  // Names held by several groups, by (type, holder set); and per group the shared sets it is in.
  const shared = new Map<string, { type: XdsType; set: HolderSet; names: string[] }>();
  const sharedOfGroup = new Map<GroupId, string[]>();
  for (const type of XDS_TYPES) {
    for (const name of several[type]) {
      const set = holderSet(type, name) as HolderSet;
      const key = `${type}\t${set.id}`;
      let group = shared.get(key);
      if (!group) {
        shared.set(key, (group = { type, set, names: [] }));
        for (const g of set.members) {
          const keys = sharedOfGroup.get(g);
          if (keys) keys.push(key);
          else sharedOfGroup.set(g, [key]);
        }
      }
      group.names.push(name);
    }
  }

  const targets = checkTargets(holderSet, references);

  // References a group does not satisfy itself, bucketed by the holder set of their target.
  const groupRefs = new Map<GroupId, GroupReferences>();
  for (const [id, table] of output.groups) groupRefs.set(id, groupReferences(id, table, targets, references));

  const problems: ConsistencyProblem[] = [];
  for (const cls of output.classes) {
    const inClass = new Set(cls.groups);
    const counts = new Map<string, number>();
    for (const g of inClass) {
      if (!output.groups.has(g)) {
        problems.push(unknownGroup(cls.id, g));
        continue;
      }
      for (const key of sharedOfGroup.get(g) ?? []) {
        const c = (counts.get(key) ?? 0) + 1;
        counts.set(key, c);
        if (c !== 2) continue;
        const entry = shared.get(key) as { type: XdsType; set: HolderSet; names: string[] };
        const here = entry.set.list.filter((h) => inClass.has(h));
        for (const name of entry.names) problems.push(duplicate(cls.id, entry.type, name, here));
      }
      const refs = groupRefs.get(g);
      if (!refs) continue;
      for (const r of refs.undecodable) problems.push(undecodable(cls.id, r));
      for (const bucket of refs.buckets) {
        if (bucket.holders && meets(bucket.holders.members, inClass)) continue;
        for (const o of bucket.owners) {
          for (const ref of references.resourceRefs(o.type, o.message)[bucket.kind])
            if (holderSet(bucket.kind, ref) === bucket.holders)
              problems.push(missing(cls.id, bucket.kind, { type: o.type, name: o.name, ref }));
        }
      }
    }
  }
  return problems;
}

/**
 * The groups holding each name of one type, in output order, and the names held by more than one
 * group in the order they became so (few, and only they can be duplicates).
 */
function holderIndex(
  groups: ReadonlyMap<GroupId, ResourceTable>,
  type: XdsType,
): { index: Map<string, Holders>; several: string[] } {
  const index = new Map<string, Holders>();
  const several: string[] = [];
  for (const [id, table] of groups) {
    for (const name of table[type].keys()) {
      const entry = index.get(name);
      if (entry === undefined) index.set(name, id);
      else if (typeof entry === 'string') {
        index.set(name, [entry, id]);
        several.push(name);
      } else (entry as GroupId[]).push(id);
    }
  }
  return { index, several };
}

interface GroupReferences {
  readonly buckets: Bucket[];
  readonly undecodable: Ref[];
}

/**
 * The references of one group's resources that the group does not satisfy itself, bucketed by the
 * holder set of their target, and its undecodable filters (a function of its own: its loops are
 * optimized as such, without an iterator result per resource).
 */
function groupReferences(
  id: GroupId,
  table: ResourceTable,
  targets: CheckTargets,
  references: ReferenceReader,
): GroupReferences {
  const buckets: Bucket[] = [];
  const bad: Ref[] = [];
  /** Puts the resource (`owner`, made when first needed) in the buckets of these targets. */
  const place = (list: readonly Target[], type: XdsType, name: string, message: object, owner?: Owner) => {
    for (let i = 0; i < list.length; i++) {
      const t = list[i] as Target;
      if (t.group !== id) {
        t.group = id;
        t.bucket = t.holders?.members.has(id) ? null : { kind: t.kind, holders: t.holders, owners: [] };
        if (t.bucket) buckets.push(t.bucket);
      }
      const bucket = t.bucket;
      if (bucket === null) continue;
      owner ??= { type, name, message };
      if (bucket.owners[bucket.owners.length - 1] !== owner) bucket.owners.push(owner);
    }
    return owner;
  };
  for (const [name, message] of table.clusters as Map<string, Cluster>) {
    const ref = clusterEndpointsRef(message);
    if (ref !== undefined) place(targets.of('endpoints', ref).alone, 'clusters', name, message);
  }
  for (const [name, message] of table.routes as Map<string, RouteConfiguration>)
    place(targets.ofRouteConfig(name, message), 'routes', name, message);
  for (const [name, message] of table.listeners as Map<string, object>) {
    let owner: Owner | undefined;
    let last: readonly Target[] | undefined;
    for (const part of references.resourceRefParts('listeners', message)) {
      if (part.undecodable.length !== 0)
        for (const u of part.undecodable) bad.push({ type: 'listeners', name, ref: u });
      const list = targets.ofPart(part);
      if (list === last) continue; // the same buckets as the part before: this owner is in them
      last = list;
      owner = place(list, 'listeners', name, message, owner);
    }
  }
  return { buckets, undecodable: bad };
}

/** The resources of `output` Envoy (or a gRPC client) would reject (envoyProblems), unsorted. */
function envoyRejections(output: CompileOutput, validator?: Validator): ConsistencyProblem[] {
  const problems: ConsistencyProblem[] = [];
  const proxyless = proxylessOnlyGroups(output.classes);
  const clean = new Set<object>();
  for (const [id, table] of output.groups) {
    for (const type of XDS_TYPES) {
      for (const [name, message] of table[type] as Map<string, object>)
        for (const p of envoyProblems(id, type, name, message, proxyless.has(id), clean, validator)) problems.push(p);
    }
  }
  return problems;
}

type CheckTargets = ReturnType<typeof checkTargets>;

/**
 * The targets of references in one check: one Target per (kind, holder set), and equal target
 * lists as one array, so a run of parts leading to the same holder sets (nearly all) costs an
 * identity comparison each. What a shared part leads to is found once per check (references.ts
 * keeps the part, its `memo` the targets), and a route config's virtual hosts are compared by
 * position with the first config of the same name: only the hosts that differ are looked at.
 */
function checkTargets(holderSet: (type: XdsType, name: string) => HolderSet | undefined, references: ReferenceReader) {
  const token = {};
  let ids = 0;
  const newTarget = (kind: RefKind, holders: HolderSet | undefined): Target => {
    const alone: Target[] = [];
    const t: Target = { id: ids++, kind, holders, alone, group: undefined, bucket: null };
    alone.push(t);
    return t;
  };
  const nowhere: Partial<Record<RefKind, Target>> = {};
  const target = (kind: RefKind, set: HolderSet | undefined): Target =>
    set ? (set.targets[kind] ??= newTarget(kind, set)) : (nowhere[kind] ??= newTarget(kind, undefined));
  const lists = new Map<string, readonly Target[]>();
  const listOf = (found: readonly Target[]): readonly Target[] => {
    if (found.length <= 1) return found.length === 0 ? NO_TARGETS : (found[0] as Target).alone;
    const key = found.map((t) => t.id).join(',');
    let list = lists.get(key);
    if (!list) lists.set(key, (list = found));
    return list;
  };
  /** The targets of either list (a superset of `a` in its order, then what `b` adds). */
  const union = (a: readonly Target[], b: readonly Target[]): readonly Target[] => {
    let out: Target[] | undefined;
    for (const t of b) if (!a.includes(t)) (out ??= [...a]).push(t);
    return out ? listOf(out) : a;
  };
  const ofPart = (part: RefPart): readonly Target[] => {
    if (part.memoOf === token) return part.memo as readonly Target[];
    const found: Target[] = [];
    for (const kind of REF_KINDS)
      for (const ref of part[kind]) {
        const t = target(kind, holderSet(kind, ref));
        if (!found.includes(t)) found.push(t);
      }
    const list = listOf(found);
    part.memoOf = token;
    part.memo = list;
    return list;
  };
  // Per route config name: a config's virtual hosts and what they lead to (the first config's, or
  // the last that differed from it in most places). A config is
  // given the targets of that basis plus those of its own differing hosts: possibly more than it
  // has, never fewer, and a target it does not have finds none of its references when a bucket
  // fails (checkConsistency reads the references again then), so no problem changes.
  const bases = new Map<string, { hosts: readonly VirtualHost[]; targets: readonly Target[] }>();
  const ofRouteConfig = (name: string, rc: RouteConfiguration): readonly Target[] => {
    const hosts = rc.virtual_hosts ?? [];
    const basis = hosts.length < MIN_BASIS_HOSTS ? undefined : bases.get(name);
    const kept = basis?.hosts ?? [];
    let list = basis?.targets ?? NO_TARGETS;
    let differing = 0;
    for (let i = 0; i < hosts.length; i++) {
      const vh = hosts[i] as VirtualHost;
      if (i < kept.length && kept[i] === vh) continue;
      differing++;
      const part = ofPart(references.virtualHostRefPart(vh));
      if (part !== list) list = union(list, part);
    }
    if (hosts.length >= MIN_BASIS_HOSTS && (!basis || differing * 2 > hosts.length))
      bases.set(name, { hosts, targets: list });
    return list;
  };
  return {
    of: (kind: RefKind, ref: string): Target => target(kind, holderSet(kind, ref)),
    ofPart,
    ofRouteConfig,
  };
}

/**
 * Throws InconsistentSnapshotError when the output has any problem; its references are read by the
 * shared reader (an output checked once: assertConsistentOnce).
 */
export function assertConsistent(output: CompileOutput): void {
  const problems = checkConsistency(output);
  if (problems.length) throw new InconsistentSnapshotError(problems);
}

/** One resource changed by a delta, after the tables were updated. */
export interface ResourceChange {
  readonly group: GroupId;
  readonly type: XdsType;
  readonly name: string;
  /** The message before the change; undefined for a new name. */
  readonly before: object | undefined;
  /** The message after the change; undefined for a deletion. */
  readonly after: object | undefined;
}

/**
 * A resource that names a ref, as its key `group\0type\0name` (one string per resource, shared by
 * its entries), with how many of its parts name the ref: a change that keeps some of them keeps
 * the entry. At 10k services the index holds ~2M entries (every namespace's route configs name
 * every cluster), so an entry is a map slot, not an object.
 */
const referrerKey = (group: GroupId, type: XdsType, name: string): string => `${group}\u0000${type}\u0000${name}`;

function referrerOf(key: string, ref: string): Ref & { readonly group: GroupId } {
  const a = key.indexOf('\u0000');
  const b = key.indexOf('\u0000', a + 1);
  return { group: key.slice(0, a) as GroupId, type: key.slice(a + 1, b) as XdsType, name: key.slice(b + 1), ref };
}

/**
 * What a delta check needs, kept up to date across deltas: who holds each name, who refers to
 * each name, and which classes use each group. Build it from a consistent output; then
 * `update(changes)` returns exactly the problems the changes introduce (none of the others can
 * appear: a duplicate needs a new name, a missing reference needs a new or changed referrer or a
 * deleted target). When the classes change (`setClasses`), a class that is new or whose groups
 * changed is checked on its own (`checkClass`).
 */
export class ConsistencyIndex {
  private readonly holders = {} as Record<XdsType, Map<string, Set<GroupId>>>;
  private readonly referrers = {} as Record<RefKind, Map<string, Map<string, number>>>;
  private readonly classesOf = new Map<GroupId, { id: string; groups: ReadonlySet<GroupId> }[]>();

  /**
   * `routeTables`: the route configs of the live tables (after each change), when the index is to
   * find the route configs that name a deleted cluster by reading them rather than remember them:
   * every namespace's sidecar config names every cluster of its port, ~2M entries at 10k services
   * (~130 MB and ~2 s to build) for a lookup only a deleted cluster needs (a read of ~10k distinct
   * virtual hosts then).
   */
  constructor(
    groups: ReadonlyMap<GroupId, ResourceTable>,
    classes: readonly ProxyClass[],
    private readonly routeTables?: () => Iterable<readonly [GroupId, ReadonlyMap<string, object>]>,
  ) {
    for (const type of XDS_TYPES) this.holders[type] = new Map();
    for (const kind of REF_KINDS) this.referrers[kind] = new Map();
    for (const [id, table] of groups) {
      for (const type of XDS_TYPES) {
        for (const [name, message] of table[type] as Map<string, object>) {
          this.hold(type, name, id);
          this.addRefs(id, type, name, message);
        }
      }
    }
    this.setClasses(classes);
  }

  /**
   * The classes `update` reports problems for. Call before an `update` whose delta comes with new
   * classes: its problems are then exact for every class whose groups did not change; a new class
   * and one whose groups changed need `checkClass`.
   */
  setClasses(classes: readonly ProxyClass[]): void {
    this.classesOf.clear();
    for (const cls of classes) {
      const entry = { id: cls.id, groups: new Set(cls.groups) };
      for (const g of entry.groups) {
        const list = this.classesOf.get(g);
        if (list) list.push(entry);
        else this.classesOf.set(g, [entry]);
      }
    }
  }

  /**
   * Every problem of one class, from the index (after its `update`) and the tables of its groups
   * (`tableOf`: undefined for a group that does not exist): what checkConsistency reports for the
   * class, less the Envoy acceptance of its resources (a per-resource check). Costs the resources
   * and references of the class's groups; a shared part of a resource whose references the class
   * satisfies is read once.
   */
  checkClass(cls: ProxyClass, tableOf: (g: GroupId) => ResourceTable | undefined): ConsistencyProblem[] {
    const problems: ConsistencyProblem[] = [];
    const inClass = new Set(cls.groups);
    const satisfied = new Set<RefPart>();
    for (const g of inClass) {
      const table = tableOf(g);
      if (!table) {
        problems.push(unknownGroup(cls.id, g));
        continue;
      }
      for (const type of XDS_TYPES) {
        for (const [name, message] of table[type] as Map<string, object>) {
          const set = this.holders[type].get(name);
          if (set && set.size > 1) {
            const here = [...set].filter((h) => inClass.has(h)).sort();
            if (here.length > 1 && here[0] === g) problems.push(duplicate(cls.id, type, name, here));
          }
          for (const part of resourceRefParts(type, message)) {
            if (satisfied.has(part)) continue;
            for (const u of part.undecodable) problems.push(undecodable(cls.id, { type, name, ref: u }));
            let ok = part.undecodable.length === 0;
            for (const kind of REF_KINDS) {
              for (const ref of part[kind]) {
                const holders = this.holders[kind].get(ref);
                if (holders && meets(holders, inClass)) continue;
                ok = false;
                problems.push(missing(cls.id, kind, { type, name, ref }));
              }
            }
            if (ok) satisfied.add(part);
          }
        }
      }
    }
    return problems;
  }

  /** Applies the changes to the index and returns the problems they introduce. `removedGroups`: groups gone altogether. */
  update(changes: readonly ResourceChange[], removedGroups: readonly GroupId[] = []): ConsistencyProblem[] {
    // A part the changed resource holds before and after (the same object: a virtual host the diff
    // kept, a shared filter) keeps its referrer entries, and its references held before the
    // change: a target deleted since is found through its referrers (below), one added breaks nothing.
    const kept = changes.map((ch) => (ch.before && ch.after ? sharedParts(ch.type, ch.before, ch.after) : NO_PARTS));
    changes.forEach((ch, c) => {
      const keep = kept[c] as ReadonlySet<RefPart>;
      if (ch.before) this.removeRefs(ch.group, ch.type, ch.name, ch.before, keep);
      if (ch.after) {
        if (!ch.before) this.hold(ch.type, ch.name, ch.group);
        this.addRefs(ch.group, ch.type, ch.name, ch.after, keep);
      } else if (ch.before) {
        const set = this.holders[ch.type].get(ch.name);
        set?.delete(ch.group);
        if (set?.size === 0) this.holders[ch.type].delete(ch.name);
      }
    });
    const problems: ConsistencyProblem[] = [];
    let routeReferrers: ReadonlyMap<string, readonly string[]> | undefined;
    for (const g of removedGroups)
      for (const cls of this.classesOf.get(g) ?? []) problems.push(unknownGroup(cls.id, g));
    changes.forEach((ch, c) => {
      const classes = this.classesOf.get(ch.group);
      if (!classes) return;
      if (ch.after) {
        if (!ch.before) {
          const set = this.holders[ch.type].get(ch.name);
          if (set && set.size > 1) {
            for (const cls of classes) {
              const here = [...set].filter((h) => cls.groups.has(h)).sort();
              if (here.length > 1) problems.push(duplicate(cls.id, ch.type, ch.name, here));
            }
          }
        }
        const keep = kept[c] as ReadonlySet<RefPart>;
        const refs =
          keep.size === 0
            ? resourceRefs(ch.type, ch.after)
            : refsOfParts(resourceRefParts(ch.type, ch.after).filter((p) => !keep.has(p)));
        for (const u of refs.undecodable)
          for (const cls of classes) problems.push(undecodable(cls.id, { type: ch.type, name: ch.name, ref: u }));
        for (const kind of REF_KINDS) {
          for (const ref of refs[kind]) {
            const set = this.holders[kind].get(ref);
            if (set?.has(ch.group)) continue;
            for (const cls of classes)
              if (!set || !meets(set, cls.groups))
                problems.push(missing(cls.id, kind, { type: ch.type, name: ch.name, ref }));
          }
        }
      } else if (ch.before && isRefKind(ch.type)) {
        const kind = ch.type;
        const set = this.holders[kind].get(ch.name);
        const keys = this.referrers[kind].get(ch.name)?.keys() ?? [];
        const routes =
          kind === 'clusters' ? (routeReferrers ??= this.routeReferrers(changes, removedGroups)) : undefined;
        for (const key of routes ? [...keys, ...(routes.get(ch.name) ?? [])] : keys) {
          const r = referrerOf(key, ch.name);
          if (set?.has(r.group)) continue;
          for (const cls of this.classesOf.get(r.group) ?? [])
            if (!set || !meets(set, cls.groups)) problems.push(missing(cls.id, kind, r));
        }
      }
    });
    return problems.sort(compareProblems);
  }

  /**
   * The route configs (referrer keys) naming each cluster the changes delete, read from the live
   * route tables (the groups `removedGroups` are gone): empty when the index remembers them.
   */
  private routeReferrers(
    changes: readonly ResourceChange[],
    removedGroups: readonly GroupId[],
  ): ReadonlyMap<string, readonly string[]> {
    const out = new Map<string, string[]>();
    if (!this.routeTables) return out;
    const deleted = new Set<string>();
    for (const ch of changes) if (ch.type === 'clusters' && ch.before && !ch.after) deleted.add(ch.name);
    if (deleted.size === 0) return out;
    const gone = new Set(removedGroups);
    // A virtual host is one part in every namespace's config: each is read once.
    const named = new Map<RefPart, readonly string[]>();
    for (const [group, routes] of this.routeTables()) {
      if (gone.has(group)) continue;
      for (const [name, message] of routes) {
        let found: Set<string> | undefined;
        for (const part of resourceRefParts('routes', message)) {
          let hits = named.get(part);
          if (!hits) named.set(part, (hits = part.clusters.filter((c) => deleted.has(c))));
          for (const c of hits) (found ??= new Set()).add(c);
        }
        for (const c of found ?? []) {
          const list = out.get(c);
          const key = referrerKey(group, 'routes', name);
          if (list) list.push(key);
          else out.set(c, [key]);
        }
      }
    }
    return out;
  }

  private hold(type: XdsType, name: string, group: GroupId): void {
    const set = this.holders[type].get(name);
    if (set) set.add(group);
    else this.holders[type].set(name, new Set([group]));
  }

  // Both read the references part by part (references.ts): no flat list per resource is made for the index.
  private addRefs(group: GroupId, type: XdsType, name: string, message: object, skip = NO_PARTS): void {
    if (type === 'routes' && this.routeTables) return;
    const key = referrerKey(group, type, name);
    for (const part of resourceRefParts(type, message)) {
      if (skip.has(part)) continue;
      for (const kind of REF_KINDS) {
        for (const ref of part[kind]) {
          let map = this.referrers[kind].get(ref);
          if (!map) this.referrers[kind].set(ref, (map = new Map()));
          map.set(key, (map.get(key) ?? 0) + 1);
        }
      }
    }
  }

  private removeRefs(group: GroupId, type: XdsType, name: string, message: object, skip = NO_PARTS): void {
    if (type === 'routes' && this.routeTables) return;
    const key = referrerKey(group, type, name);
    for (const part of resourceRefParts(type, message)) {
      if (skip.has(part)) continue;
      for (const kind of REF_KINDS) {
        for (const ref of part[kind]) {
          const map = this.referrers[kind].get(ref);
          const count = map?.get(key);
          if (!map || count === undefined) continue;
          if (count > 1) {
            map.set(key, count - 1);
            continue;
          }
          map.delete(key);
          if (map.size === 0) this.referrers[kind].delete(ref);
        }
      }
    }
  }
}

const NO_PARTS: ReadonlySet<RefPart> = new Set();

/** The parts (the same objects) a resource holds both before and after a change. */
function sharedParts(type: XdsType, before: object, after: object): ReadonlySet<RefPart> {
  const was = new Set(resourceRefParts(type, before));
  let both: Set<RefPart> | undefined;
  for (const part of resourceRefParts(type, after)) if (was.has(part)) (both ??= new Set()).add(part);
  return both ?? NO_PARTS;
}

const PROBLEM_KEYS = ['classId', 'code', 'group', 'type', 'name', 'ref', 'field', 'rule'] as const;

export function compareProblems(a: ConsistencyProblem, b: ConsistencyProblem): number {
  for (const k of PROBLEM_KEYS) {
    const x = a[k] ?? '';
    const y = b[k] ?? '';
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

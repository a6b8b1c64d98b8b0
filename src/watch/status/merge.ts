/**
 * The status to write for one Gateway API object: what the compile computed (object-status.ts,
 * without times) merged with what the object carries now. Pure.
 *
 * - A condition keeps its `lastTransitionTime` while its `status` stays the same (reason, message
 *   and observedGeneration may change under it), and gets `now` when its status changes or it is
 *   new; that is metav1.Condition's contract, as istiod and `meta.SetStatusCondition` keep it.
 *   Conditions are matched by type, within the same listener (by name) or route parent (by parentRef).
 * - A route's `parents[]` is shared by every controller that serves one of its parents: entries of
 *   other controllers are kept as they are, and ours (by controllerName) replaced by the computed
 *   ones, as istiod's createRouteStatus does (see mergeRouteStatus).
 * - A GatewayClass's and a Gateway's status belong to their controller: replaced whole.
 */
import { GATEWAY_API_GROUP, OWN_CONTROLLERS } from '../../model/gateway-api.js';
import {
  type GatewayClassStatus,
  type GatewayStatus,
  type ListenerStatus,
  type ObjectStatus,
  type RouteParentStatus,
  type RouteStatus,
  type StatusCondition,
  type StatusParentReference,
} from '../../model/object-status.js';

export type Json = Record<string, unknown>;

const isRecord = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const records = (v: unknown): Json[] => (Array.isArray(v) ? v.filter(isRecord) : []);

export const ROUTE_KINDS: ReadonlySet<string> = new Set(['HTTPRoute', 'GRPCRoute', 'TCPRoute', 'TLSRoute']);

export interface MergeContext {
  /** The kind and namespace of the object (a parentRef without a namespace means the route's). */
  readonly kind: string;
  readonly namespace: string;
  /** The object's `status` as the API server has it now (undefined when it has none). */
  readonly current: unknown;
  /** RFC 3339, seconds precision: the time of a condition whose status changed. */
  readonly now: string;
  /** Filled into conditions the compile left without one: the generation of the object it compiled. */
  readonly generation?: number;
}

/** A route parent entry of ours: under Istio's controller name or meshsnap's alias. */
const isOurs = (p: Json): boolean => typeof p.controllerName === 'string' && OWN_CONTROLLERS.includes(p.controllerName);

/** The full status to write: the computed one, with transition times, merged with the current one. */
export function mergeStatus(computed: ObjectStatus, ctx: MergeContext): Json {
  if (ROUTE_KINDS.has(ctx.kind)) return mergeRouteStatus((computed as RouteStatus).parents ?? [], ctx);
  const current = isRecord(ctx.current) ? ctx.current : {};
  const own = computed as GatewayStatus | GatewayClassStatus;
  const out: Json = { conditions: timedConditions(own.conditions, current.conditions, ctx) };
  if (ctx.kind === 'Gateway') {
    const gw = computed as GatewayStatus;
    const before = records(current.listeners);
    out.listeners = (gw.listeners ?? []).map((l) => timedListener(l, before, ctx));
    if (gw.addresses && gw.addresses.length > 0) out.addresses = gw.addresses.map((a) => ({ ...a }));
  }
  return out;
}

/**
 * A route's status where meshsnap is responsible for none of its parents any more: the other
 * controllers' entries only. Undefined when it has no entry of ours (nothing to remove).
 */
export function withoutOurParents(ctx: MergeContext): Json | undefined {
  const parents = records(isRecord(ctx.current) ? ctx.current.parents : undefined);
  if (!parents.some(isOurs)) return undefined;
  return mergeRouteStatus([], ctx);
}

/**
 * istiod's createRouteStatus: other controllers' entries stay where they are; an entry of ours is
 * replaced in place when the compile still reports its parentRef and removed when not; entries for
 * new parentRefs are appended, ordered by parentRefString descending as istiod orders them.
 */
function mergeRouteStatus(ours: readonly RouteParentStatus[], ctx: MergeContext): Json {
  const current = records(isRecord(ctx.current) ? ctx.current.parents : undefined);
  const computed = new Map(ours.map((p) => [parentRefKey(p.parentRef, ctx.namespace), p]));
  const entry = (p: RouteParentStatus, before: Json | undefined): Json => ({
    parentRef: { ...p.parentRef },
    controllerName: p.controllerName,
    conditions: timedConditions(p.conditions, before?.conditions, ctx),
  });
  const parents: Json[] = [];
  const placed = new Set<string>();
  for (const p of current) {
    if (!isOurs(p)) {
      parents.push(p);
      continue;
    }
    const key = isRecord(p.parentRef) ? parentRefKey(p.parentRef, ctx.namespace) : '';
    const now = computed.get(key);
    if (now && !placed.has(key)) {
      parents.push(entry(now, p));
      placed.add(key);
    }
  }
  const added = [...computed].filter(([key]) => !placed.has(key)).sort(([a], [b]) => (a > b ? -1 : a < b ? 1 : 0));
  for (const [, p] of added) parents.push(entry(p, undefined));
  return { parents };
}

function timedListener(l: ListenerStatus, before: readonly Json[], ctx: MergeContext): Json {
  const prev = before.find((b) => b.name === l.name);
  return {
    name: l.name,
    supportedKinds: l.supportedKinds.map((k) => ({ ...k })),
    attachedRoutes: l.attachedRoutes,
    conditions: timedConditions(l.conditions, prev?.conditions, ctx),
  };
}

/**
 * The computed conditions, each with its transition time (kept while its status is the same).
 * Conditions already there keep their place (as istiod's UpdateConditionIfChanged replaces them in
 * place), new types follow in the compile's order; a type the compile no longer reports is dropped.
 */
export function timedConditions(
  computed: readonly StatusCondition[],
  previous: unknown,
  ctx: Pick<MergeContext, 'now' | 'generation'>,
): Json[] {
  const before = records(previous);
  const timed = (c: StatusCondition): Json => {
    const prev = before.find((b) => b.type === c.type);
    const kept = prev?.status === c.status && typeof prev.lastTransitionTime === 'string';
    const observedGeneration = c.observedGeneration ?? ctx.generation;
    return {
      type: c.type,
      status: c.status,
      reason: c.reason,
      message: c.message,
      ...(observedGeneration !== undefined ? { observedGeneration } : {}),
      lastTransitionTime: kept ? (prev.lastTransitionTime as string) : ctx.now,
    };
  };
  const byType = new Map(computed.map((c) => [c.type, c]));
  const out: Json[] = [];
  for (const b of before) {
    const c = typeof b.type === 'string' ? byType.get(b.type) : undefined;
    if (!c) continue;
    out.push(timed(c));
    byType.delete(c.type);
  }
  for (const c of byType.values()) out.push(timed(c));
  return out;
}

/**
 * istiod's parentRefString: group/kind/name/sectionName/port.namespace with the spec's defaults
 * (group gateway.networking.k8s.io, kind Gateway, the route's namespace; port 0 when unset).
 */
export function parentRefKey(ref: StatusParentReference | Json, routeNamespace: string): string {
  const r = ref as Partial<Record<keyof StatusParentReference, unknown>>;
  // Unset takes the default; an explicit "" stays (a Service's group is the core group, "").
  const or = (v: unknown, d: string): string => (typeof v === 'string' ? v : d);
  const port = typeof r.port === 'number' ? r.port : 0;
  return `${or(r.group, GATEWAY_API_GROUP)}/${or(r.kind, 'Gateway')}/${or(r.name, '')}/${or(r.sectionName, '')}/${port}.${or(r.namespace, routeNamespace)}`;
}
/** metav1.Time: RFC 3339 in UTC, whole seconds. */
export const metaTime = (d: Date): string => d.toISOString().replace(/\.\d+Z$/, 'Z');

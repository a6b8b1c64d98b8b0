/**
 * Diagnostics of an incremental compile: the sorted list a full compile would give, kept up to
 * date by removing and inserting the few diagnostics that change, instead of re-sorting them all.
 *
 * Only two compiler diagnostics read endpoints, both about one service: `subset-no-endpoints`
 * (destination-rules.ts) and `unresolved-target-port` (listener/inbound-ports.ts). They are
 * recomputed per service by running the very code that reports them, on that service alone, so
 * they cannot drift from what a full compile says.
 */
import { Diagnostics, type Diagnostic } from '../../model/diagnostics.js';
import type { MeshService, ServiceModel } from '../../model/service-model.js';
import type { CompileContext } from '../context.js';
import { indexDestinationRules } from '../destination-rules.js';
import { reportNamedTargetPorts, TARGET_PORT_DIFFERS, UNRESOLVED_TARGET_PORT } from '../listeners.js';

/** The codes of the diagnostics that depend on endpoints. */
export const ENDPOINT_DIAGNOSTIC_CODES: ReadonlySet<string> = new Set([
  'subset-no-endpoints',
  UNRESOLVED_TARGET_PORT,
  TARGET_PORT_DIFFERS,
]);

/** The order of `sortDiagnostics` (model/diagnostics.ts): two diagnostics comparing equal are equal. */
const KEYS = ['kind', 'namespace', 'name', 'field', 'code', 'severity', 'message', 'file'] as const;

export function compareDiagnostics(a: Diagnostic, b: Diagnostic): number {
  for (const k of KEYS) {
    const x = a[k] ?? '';
    const y = b[k] ?? '';
    if (x !== y) return x < y ? -1 : 1;
  }
  return (a.index ?? 0) - (b.index ?? 0);
}

/** First position whose element is not before `d`. */
function lowerBound(list: readonly Diagnostic[], d: Diagnostic): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareDiagnostics(list[mid] as Diagnostic, d) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** A sorted diagnostics list with O(log n) search and memmove-cost edits. */
export class SortedDiagnostics {
  private readonly list: Diagnostic[];

  /** `sorted` must be in `sortDiagnostics` order (a compile result's diagnostics are). */
  constructor(sorted: readonly Diagnostic[]) {
    this.list = [...sorted];
  }

  /** Replaces `before` by `after` (as multisets); nothing happens when they are equal. */
  replace(before: readonly Diagnostic[], after: readonly Diagnostic[]): void {
    if (sameDiagnostics(before, after)) return;
    for (const d of before) {
      const i = lowerBound(this.list, d);
      if (i < this.list.length && compareDiagnostics(this.list[i] as Diagnostic, d) === 0) this.list.splice(i, 1);
    }
    for (const d of after) this.list.splice(lowerBound(this.list, d), 0, d);
  }

  /** A copy: callers keep results while later updates edit this list. */
  toArray(): Diagnostic[] {
    return [...this.list];
  }
}

export function sameDiagnostics(a: readonly Diagnostic[], b: readonly Diagnostic[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (compareDiagnostics(a[i] as Diagnostic, b[i] as Diagnostic) !== 0) return false;
  return true;
}

/** Whether the service's inbound side reads its endpoints: a named targetPort resolves through them. */
export const hasNamedTargetPort = (s: MeshService): boolean =>
  s.ports.some((p) => p.protocol !== 'UDP' && typeof p.targetPort === 'string');

/** The endpoint-dependent diagnostics of one service, in canonical order. */
export function serviceEndpointDiagnostics(ctx: CompileContext, service: MeshService): Diagnostic[] {
  const scratch = new Diagnostics();
  const rule = ctx.destinationRules.lookup(service.hostname);
  if (rule?.spec.subsets?.some((s) => s.labels && Object.keys(s.labels).length > 0)) {
    // The rule index over this service and the rules that resolved for it picks and merges them
    // again, and warns about subsets selecting none of its endpoints exactly as the full index does.
    const model: ServiceModel = {
      services: [service],
      byHostname: new Map([[service.hostname, service]]),
      endpoints: new Map([[service.hostname, ctx.model.endpoints.get(service.hostname) ?? new Map()]]),
      proxyLocalities: [],
      nodeLocalities: new Map(),
      namespaces: [],
      workloads: [],
      entryWorkloads: [],
      virtualServices: [],
      destinationRules: rule.sources,
      gateways: [],
    };
    indexDestinationRules(model, ctx.mesh, scratch);
  }
  reportNamedTargetPorts(ctx, service, scratch);
  return scratch.sorted().filter((d) => ENDPOINT_DIAGNOSTIC_CODES.has(d.code));
}

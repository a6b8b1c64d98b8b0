/** Diagnostics of the conversion: one status diagnostic per object, one warning per route problem. */
import { type Diagnostics, objectAt } from '../../model/diagnostics.js';
import { writtenKind, type GatewayApiObject, type GatewayApiRoute } from '../../model/gateway-api.js';
import { STATUS_DIAGNOSTIC_CODE, type ObjectStatus, type StatusCondition } from '../../model/object-status.js';
import type { Problem } from './rule-parts.js';

function summary(status: ObjectStatus): string {
  const conds: readonly StatusCondition[] =
    'parents' in status ? status.parents.flatMap((p) => p.conditions) : status.conditions;
  const bad = conds.filter((c) => (c.type === 'Conflicted' ? c.status !== 'False' : c.status !== 'True'));
  if (!bad.length) return 'status: all conditions True';
  return `status: ${bad.map((c) => `${c.type}=${c.status} (${c.reason})`).join(', ')}`;
}

export function reportStatus(diags: Diagnostics, o: GatewayApiObject, status: ObjectStatus): void {
  diags.info({
    code: STATUS_DIAGNOSTIC_CODE,
    message: summary(status),
    kind: writtenKind(o),
    ...(o.meta.namespace ? { namespace: o.meta.namespace } : {}),
    name: o.meta.name,
    ...(o.origin.file !== undefined ? { file: o.origin.file } : {}),
    ...(o.origin.index !== undefined ? { index: o.origin.index } : {}),
    status,
  });
}

export function reportProblems(diags: Diagnostics, route: GatewayApiRoute, problems: readonly Problem[]): void {
  const seen = new Set<string>();
  for (const { field, error } of problems) {
    const k = `${field}|${error.reason}`;
    if (seen.has(k)) continue;
    seen.add(k);
    diags.warn({
      code: `gateway-api-${error.reason.replace(/[A-Z]/g, (c, i: number) => (i ? '-' : '') + c.toLowerCase())}`,
      message: `${error.reason}: ${error.message}`,
      ...objectAt(route.kind, route, field),
    });
  }
}

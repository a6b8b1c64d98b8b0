/** The statuses a compile computed: its `gateway-api-status` diagnostics, one per object. Pure. */
import type { Diagnostic } from '../../model/diagnostics.js';
import { STATUS_DIAGNOSTIC_CODE, type ObjectStatus } from '../../model/object-status.js';

export interface ComputedStatus {
  /** `Kind/namespace/name` (namespace empty for a GatewayClass), with the object's own kind (`Gateway`). */
  readonly key: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly status: ObjectStatus;
}

export function computedStatuses(diagnostics: readonly Diagnostic[]): ComputedStatus[] {
  const out = new Map<string, ComputedStatus>();
  for (const d of diagnostics) {
    if (d.code !== STATUS_DIAGNOSTIC_CODE || !d.status || !d.kind || !d.name) continue;
    // The compiler's model calls the Gateway API's Gateway `KubernetesGateway`; the object says Gateway.
    const kind = d.kind === 'KubernetesGateway' ? 'Gateway' : d.kind;
    const namespace = d.namespace ?? '';
    const key = `${kind}/${namespace}/${d.name}`;
    out.set(key, { key, kind, namespace, name: d.name, status: d.status });
  }
  return [...out.values()];
}

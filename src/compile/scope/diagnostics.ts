/**
 * What meshsnap does not apply of a Sidecar, said once per object: egress listeners on a unix
 * domain socket or with protocol HTTP_PROXY (then every listener's hosts count, for every port, as
 * if the Sidecar had only a catch-all listener); ingress listeners' unbuilt
 * parts are in listener/sidecar-ingress.ts. Also istiod's analyzer warning for a namespace with
 * several selector-less Sidecars (only the oldest applies).
 */
import type { Diagnostics } from '../../model/diagnostics.js';
import type { Sidecar } from '../../model/sidecar.js';
import { isBuiltEgressListener } from './egress-listeners.js';

const where = (s: Sidecar) => ({
  kind: 'Sidecar',
  namespace: s.meta.namespace,
  name: s.meta.name,
  ...(s.origin.file !== undefined ? { file: s.origin.file } : {}),
  ...(s.origin.index !== undefined ? { index: s.origin.index } : {}),
});

/** Reports the Sidecars' unapplied parts, and gives them back. */
export function sidecarDiagnostics(sidecars: readonly Sidecar[], diags: Diagnostics): readonly Sidecar[] {
  const namespaceWide = new Map<string, number>();
  for (const s of sidecars) {
    if (!s.spec.workloadSelector) namespaceWide.set(s.meta.namespace, (namespaceWide.get(s.meta.namespace) ?? 0) + 1);
    s.spec.egress?.forEach((e, i) => {
      if (!isBuiltEgressListener(e))
        diags.warn({
          ...where(s),
          code: 'unsupported-sidecar-field',
          field: `spec.egress[${i}]`,
          message:
            'egress listeners on a unix domain socket or with protocol HTTP_PROXY are not built: the hosts of all egress listeners are imported for every port of the catch-all outbound listeners',
        });
    });
  }
  for (const s of sidecars)
    if (!s.spec.workloadSelector && (namespaceWide.get(s.meta.namespace) ?? 0) > 1)
      diags.warn({
        ...where(s),
        code: 'conflicting-sidecar',
        field: 'spec',
        message: `namespace ${s.meta.namespace} has several Sidecars without a workloadSelector; only the oldest applies`,
      });
  return sidecars;
}

/**
 * What meshsnap does not apply of a Sidecar, said once per object: a unix domain socket egress
 * listener with a protocol that is not HTTP-like (istiod's TCP chains there send to
 * `outbound|0||<host>`, a cluster that never exists; meshsnap builds no listener for it); ingress
 * listeners' unbuilt parts are in listener/sidecar-ingress.ts. Also istiod's analyzer warning for a
 * namespace with several selector-less Sidecars (only the oldest applies).
 */
import { type Diagnostics, objectAt } from '../../model/diagnostics.js';
import { isHttpProtocol } from '../../model/service-model.js';
import { sidecarPortProtocol, type Sidecar, type SidecarEgressListener } from '../../model/sidecar.js';

const isTcpSocket = (e: SidecarEgressListener): boolean =>
  e.port?.number === 0 &&
  e.port.protocol?.toUpperCase() !== 'HTTP_PROXY' &&
  !isHttpProtocol(sidecarPortProtocol(e.port));

const where = (s: Sidecar) => objectAt('Sidecar', s);

/** Reports the Sidecars' unapplied parts and conflicts, and gives them back. */
export function sidecarDiagnostics(sidecars: readonly Sidecar[], diags: Diagnostics): readonly Sidecar[] {
  const namespaceWide = new Map<string, number>();
  for (const s of sidecars) {
    if (!s.spec.workloadSelector) namespaceWide.set(s.meta.namespace, (namespaceWide.get(s.meta.namespace) ?? 0) + 1);
    s.spec.egress?.forEach((e, i) => {
      if (isTcpSocket(e))
        diags.warn({
          ...where(s),
          code: 'unsupported-sidecar-field',
          field: `spec.egress[${i}]`,
          message:
            'a unix domain socket egress listener with a non-HTTP protocol is not built: istiod sends its traffic to cluster outbound|0||<host>, which does not exist',
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

/**
 * PeerAuthentication → the mTLS mode of a workload's inbound ports (istiod's
 * ComposePeerAuthentication and AuthenticationPolicies.GetNamespaceMutualTLSMode).
 *
 * Scopes: mesh (root namespace, no selector), namespace (no selector), workload (selector, never in
 * the root namespace). The narrowest scope that sets a mode wins; UNSET inherits; without any
 * policy the mode is PERMISSIVE. Within one scope the oldest policy wins (creationTimestamp, then
 * name), as in istiod. `portLevelMtls` of the workload policy overrides per target port, UNSET
 * there meaning the workload's mode.
 */
import type { EffectiveMtlsMode, MtlsMode, PeerAuthentication } from '../../model/peer-authentication.js';
import { selects } from '../../proxy-class/class-id.js';

export interface MtlsSettings {
  readonly mode: EffectiveMtlsMode;
  /** Target port → mode, from the workload policy's portLevelMtls; sorted by port. */
  readonly perPort: ReadonlyMap<number, EffectiveMtlsMode>;
}

export const PERMISSIVE_ONLY: MtlsSettings = { mode: 'PERMISSIVE', perPort: new Map() };

export const hasSelector = (p: { readonly spec: { readonly selector?: { readonly matchLabels?: object } } }): boolean =>
  Object.keys(p.spec.selector?.matchLabels ?? {}).length > 0;

/** istiod's sortConfigByCreationTime: oldest first, then by name, then namespace. */
export function oldestFirst(a: PeerAuthentication, b: PeerAuthentication): number {
  const ta = a.creationTimestamp ?? '';
  const tb = b.creationTimestamp ?? '';
  if (ta !== tb) return ta < tb ? -1 : 1;
  if (a.meta.name !== b.meta.name) return a.meta.name < b.meta.name ? -1 : 1;
  return a.meta.namespace < b.meta.namespace ? -1 : a.meta.namespace > b.meta.namespace ? 1 : 0;
}

const setMode = (m: MtlsMode | undefined): m is EffectiveMtlsMode => m !== undefined && m !== 'UNSET';

export interface PeerAuthnIndex {
  /** The settings of a workload (its namespace and labels). */
  forWorkload(namespace: string, labels: Readonly<Record<string, string>>): MtlsSettings;
  /** The workload policy that decides for these labels, if any (for class keys). */
  workloadPolicy(namespace: string, labels: Readonly<Record<string, string>>): PeerAuthentication | undefined;
  /** Mesh/namespace-level mode, or undefined when neither exists (client-side auto mTLS hint). */
  namespaceMode(namespace: string): EffectiveMtlsMode | undefined;
}

export function indexPeerAuthentications(
  policies: readonly PeerAuthentication[],
  rootNamespace: string,
): PeerAuthnIndex {
  const sorted = [...policies].sort(oldestFirst);
  const scopeOf = new Map<string, PeerAuthentication>();
  const workloadPolicies = new Map<string, PeerAuthentication[]>();
  for (const p of sorted) {
    const ns = p.meta.namespace;
    if (!hasSelector(p)) {
      if (!scopeOf.has(ns)) scopeOf.set(ns, p);
    } else if (ns !== rootNamespace) {
      const list = workloadPolicies.get(ns);
      if (list) list.push(p);
      else workloadPolicies.set(ns, [p]);
    }
  }
  const mesh = scopeOf.get(rootNamespace);
  // A mesh policy with UNSET counts as PERMISSIVE for the namespace inference, as istiod.
  const meshMode: EffectiveMtlsMode | undefined = mesh
    ? setMode(mesh.spec.mtls?.mode)
      ? (mesh.spec.mtls?.mode as EffectiveMtlsMode)
      : 'PERMISSIVE'
    : undefined;

  const namespaceMode = (namespace: string): EffectiveMtlsMode | undefined => {
    const own = namespace === rootNamespace ? undefined : scopeOf.get(namespace);
    if (own) return setMode(own.spec.mtls?.mode) ? own.spec.mtls.mode : (meshMode ?? 'PERMISSIVE');
    return meshMode;
  };

  const workloadPolicy = (namespace: string, labels: Readonly<Record<string, string>>) =>
    (workloadPolicies.get(namespace) ?? []).find((p) => selects(p.spec.selector?.matchLabels ?? {}, labels));

  return {
    namespaceMode,
    workloadPolicy,
    forWorkload(namespace, labels) {
      let mode: EffectiveMtlsMode = 'PERMISSIVE';
      const meshMtls = mesh?.spec.mtls?.mode;
      if (setMode(meshMtls)) mode = meshMtls;
      const nsPolicy = namespace === rootNamespace ? undefined : scopeOf.get(namespace);
      const nsMtls = nsPolicy?.spec.mtls?.mode;
      if (setMode(nsMtls)) mode = nsMtls;
      const workload = workloadPolicy(namespace, labels);
      const wlMtls = workload?.spec.mtls?.mode;
      if (setMode(wlMtls)) mode = wlMtls;
      const perPort = new Map<number, EffectiveMtlsMode>();
      const ports = workload?.spec.portLevelMtls ?? {};
      for (const port of Object.keys(ports)
        .map(Number)
        .sort((a, b) => a - b)) {
        const m = ports[String(port)]?.mode;
        perPort.set(port, setMode(m) ? m : mode);
      }
      return { mode, perPort };
    },
  };
}

/** The mode of one target port (port 0: the passthrough without a port match). */
export const modeForPort = (s: MtlsSettings, port: number): EffectiveMtlsMode => s.perPort.get(port) ?? s.mode;

/**
 * What istiod (or its analyzers) would say about the security policies, as diagnostics on the
 * policy objects: policies that select nothing or do not apply to sidecars, rules the builder
 * skips, CUSTOM providers that fail closed, DENY rules that are stricter on TCP, identity matches
 * on workloads that accept plaintext only, conflicting PeerAuthentications.
 */
import type { AuthorizationPolicy, AuthzRule } from '../../model/authorization-policy.js';
import type { Diagnostics } from '../../model/diagnostics.js';
import type { InputSet } from '../../model/inputs.js';
import type { PeerAuthentication } from '../../model/peer-authentication.js';
import type { RequestAuthentication } from '../../model/request-authentication.js';
import type { ServiceModel, Workload } from '../../model/service-model.js';
import { selects } from '../../proxy-class/class-id.js';
import { buildHttpAuthzFilters, buildTcpAuthzFilters, groupByAction, type AuthzOptions } from './authz/builder.js';
import { hasSelector, oldestFirst, type PeerAuthnIndex } from './peer-authn.js';

type Policy = AuthorizationPolicy | PeerAuthentication | RequestAuthentication;

/**
 * istiod attaches a targetRef(s) policy only to Gateway API Gateways (gateway.networking.k8s.io,
 * by the pod's gateway-name label) and waypoints; on sidecars and Istio Gateway pods it ignores
 * the policy. meshsnap serves neither kind.
 */
const TARGET_REF_NOT_APPLIED =
  'policies with targetRef(s) attach only to Gateway API Gateways and waypoints, which meshsnap does not serve (Istio Gateways, networking.istio.io, are selected by label as sidecars are): no proxy enforces it';

const HTTP_ONLY_OPERATION = ['hosts', 'notHosts', 'methods', 'notMethods', 'paths', 'notPaths'] as const;

/** Whether a rule uses a field that only HTTP requests have. */
export function hasHttpOnlyField(rule: AuthzRule | null): boolean {
  if (!rule) return false;
  return (
    (rule.to ?? []).some((t) => HTTP_ONLY_OPERATION.some((f) => (t.operation?.[f]?.length ?? 0) > 0)) ||
    (rule.from ?? []).some(
      (f) => (f.source?.requestPrincipals?.length ?? 0) > 0 || (f.source?.notRequestPrincipals?.length ?? 0) > 0,
    ) ||
    (rule.when ?? []).some((c) => c.key.startsWith('request.'))
  );
}

function selectedWorkloads(p: Policy, model: ServiceModel, rootNamespace: string, meshWide: boolean): Workload[] {
  const labels = p.spec.selector?.matchLabels ?? {};
  return model.workloads.filter(
    (w) =>
      (w.namespace === p.meta.namespace || (meshWide && p.meta.namespace === rootNamespace)) &&
      selects(labels, w.labels),
  );
}

export function reportPolicyDiagnostics(
  inputs: InputSet,
  model: ServiceModel,
  opts: AuthzOptions,
  peer: PeerAuthnIndex,
  diags: Diagnostics,
): void {
  const root = inputs.meshConfig.rootNamespace;
  const say = (p: Policy, severity: 'warning' | 'info', code: string, message: string, field?: string) =>
    diags.add({
      severity,
      code,
      message,
      kind: p.kind,
      namespace: p.meta.namespace,
      name: p.meta.name,
      ...(field !== undefined ? { field } : {}),
      file: p.origin.file,
      index: p.origin.index,
    });

  /**
   * False, with a warning, for a policy with targetRef(s), which no sidecar enforces; true
   * otherwise, with a warning when its selector matches no pod.
   */
  const appliesToSidecars = (p: AuthorizationPolicy | RequestAuthentication): boolean => {
    if (p.spec.targetRef || p.spec.targetRefs?.length) {
      say(
        p,
        'warning',
        'policy-not-applied',
        TARGET_REF_NOT_APPLIED,
        p.spec.targetRef ? 'spec.targetRef' : 'spec.targetRefs',
      );
      return false;
    }
    if (hasSelector(p) && selectedWorkloads(p, model, root, true).length === 0)
      say(p, 'warning', 'policy-selects-nothing', 'the selector matches no pod in the inputs', 'spec.selector');
    return true;
  };

  for (const p of inputs.authorizationPolicies) {
    if (!appliesToSidecars(p)) continue;

    const messages = new Set<string>();
    const one = groupByAction([p]);
    buildHttpAuthzFilters(one, { ...opts, warn: (m) => messages.add(m) });
    // An ALLOW rule with HTTP-only fields is left out of TCP chains: stricter there, and istiod only
    // logs it at debug level. Anything else the TCP build says is reported.
    buildTcpAuthzFilters(one, { ...opts, warn: (m) => !m.includes('on TCP filter chain') && messages.add(m) });
    for (const m of [...messages].sort()) {
      const custom = m.includes('CUSTOM');
      say(
        p,
        'warning',
        custom ? 'authz-provider-failed' : 'authz-rule-skipped',
        custom ? `${m}; the requests it covers are denied` : m,
        custom ? 'spec.provider' : 'spec.rules',
      );
    }
    const action = p.spec.action ?? 'ALLOW';
    if ((action === 'DENY' || action === 'AUDIT') && (p.spec.rules ?? []).some(hasHttpOnlyField))
      say(
        p,
        'warning',
        'authz-http-only-on-tcp',
        `on TCP traffic (ports not declared HTTP, and the passthrough) its rules are enforced without their HTTP-only fields (hosts, methods, paths, requestPrincipals, request.*), so this ${action} matches more connections than on HTTP`,
        'spec.rules',
      );
    if (usesPeerIdentityOnPlaintext(p, model, root, peer))
      say(
        p,
        'warning',
        'principals-without-mtls',
        'it matches on peer identity (principals, namespaces, …), but a workload it applies to accepts plaintext only (PeerAuthentication DISABLE): those fields never match there',
        'spec.rules',
      );
  }
  reportPeerAuthentications(inputs.peerAuthentications, model, root, say);
  for (const p of inputs.requestAuthentications) {
    if (!appliesToSidecars(p)) continue;
    (p.spec.jwtRules ?? []).forEach((rule, i) => {
      if (rule.jwks === undefined && rule.jwksUri === undefined)
        say(
          p,
          'warning',
          'jwks-unknown',
          `issuer ${JSON.stringify(rule.issuer)} has neither jwks nor jwksUri; istiod would discover its keys over OIDC, meshsnap compiles without fetching: every token of this issuer is rejected`,
          `spec.jwtRules[${i}]`,
        );
    });
  }
}

/** Whether a policy matches on the peer's certificate identity (principals, namespaces, source.principal/namespace). */
export function usesPeerIdentity(p: AuthorizationPolicy): boolean {
  return (p.spec.rules ?? []).some(
    (r) =>
      r?.from?.some((f) =>
        ['principals', 'notPrincipals', 'namespaces', 'notNamespaces'].some(
          (k) => (f.source?.[k as 'principals']?.length ?? 0) > 0,
        ),
      ) || r?.when?.some((c) => c.key === 'source.principal' || c.key === 'source.namespace'),
  );
}

function usesPeerIdentityOnPlaintext(
  p: AuthorizationPolicy,
  model: ServiceModel,
  root: string,
  peer: PeerAuthnIndex,
): boolean {
  if (!usesPeerIdentity(p)) return false;
  return selectedWorkloads(p, model, root, true).some((w) => {
    const s = peer.forWorkload(w.namespace, w.labels);
    return s.mode === 'DISABLE' || [...s.perPort.values()].includes('DISABLE');
  });
}

function reportPeerAuthentications(
  policies: readonly PeerAuthentication[],
  model: ServiceModel,
  root: string,
  say: (p: Policy, severity: 'warning' | 'info', code: string, message: string, field?: string) => void,
): void {
  const scopes = new Map<string, PeerAuthentication[]>();
  for (const p of [...policies].sort(oldestFirst)) {
    if (hasSelector(p)) {
      if (p.meta.namespace === root)
        say(
          p,
          'warning',
          'policy-not-applied',
          'a PeerAuthentication with a selector in the root namespace is ignored, as by istiod',
          'spec.selector',
        );
      else if (selectedWorkloads(p, model, root, false).length === 0)
        say(p, 'warning', 'policy-selects-nothing', 'the selector matches no pod in the inputs', 'spec.selector');
      continue;
    }
    const list = scopes.get(p.meta.namespace) ?? [];
    list.push(p);
    scopes.set(p.meta.namespace, list);
  }
  for (const list of scopes.values())
    for (const p of list.slice(1))
      say(
        p,
        'warning',
        'conflicting-peer-authentication',
        `${(list[0] as PeerAuthentication).meta.name} is the oldest ${p.meta.namespace === root ? 'mesh' : 'namespace'}-wide PeerAuthentication of its namespace and wins; this one is ignored, as by istiod`,
      );
}

/**
 * The security policies of the mesh, indexed once per compile: which apply to a sidecar workload
 * (by namespace and labels), the filters they become, and the diagnostics about them.
 *
 * A workload's inbound config depends on the policies that apply to it. Those without a selector
 * apply to every workload of their namespace (or of the mesh, from the root namespace), so they
 * are the same for every class of a namespace; those with a selector pick workloads by label, so
 * their keys are part of the class (`WorkloadSecurity.key`) and the relay learns their selectors
 * (`policySelectors`) to place proxies the same way.
 */
import type { AuthorizationPolicy } from '../../model/authorization-policy.js';
import type { Diagnostics } from '../../model/diagnostics.js';
import type { InputSet } from '../../model/inputs.js';
import { DEFAULT_TRUST_DOMAIN, type MeshConfig } from '../../model/mesh-config.js';
import type { PeerAuthentication } from '../../model/peer-authentication.js';
import type { RequestAuthentication } from '../../model/request-authentication.js';
import type { ServiceModel } from '../../model/service-model.js';
import { appliesToRouters, selects } from '../../proxy-class/class-id.js';
import { outboundClusterName } from '../names.js';
import {
  buildHttpAuthzFilters,
  buildTcpAuthzFilters,
  groupByAction,
  type AuthzFilter,
  type AuthzOptions,
  type WorkloadPolicies,
} from './authz/builder.js';
import type { ServiceLookup } from './authz/ext-authz.js';
import { providerService } from '../provider-service.js';
import { policiesForWorkload } from './authz/selection.js';
import { trustDomainBundle, type TrustDomainBundle } from './authz/trust-domain.js';
import { reportPolicyDiagnostics } from './diagnostics.js';
import { buildJwtFilter } from './jwt.js';
import { hasSelector, indexPeerAuthentications, PERMISSIVE_ONLY, type MtlsSettings } from './peer-authn.js';

export interface WorkloadSecurity {
  /** Keys of the label-selected policies that apply, sorted and joined by `,`; "" when none. */
  readonly key: string;
  readonly mtls: MtlsSettings;
  /**
   * Security filters of the HTTP chains, before fault, cors and the router: CUSTOM authorization,
   * then jwt_authn, then AUDIT/DENY/ALLOW RBAC (istiod's order); and of the TCP chains, before tcp_proxy.
   */
  readonly httpFilters: readonly AuthzFilter[];
  readonly tcpFilters: readonly AuthzFilter[];
  /** The AuthorizationPolicies that apply, by action (proxyless gRPC servers build their own filters). */
  readonly authz: WorkloadPolicies;
}

/**
 * What the policies make of a gateway (router) pod: AuthorizationPolicies and
 * RequestAuthentications selected as for a sidecar (istiod's PolicyMatcherForProxy on an Istio
 * Gateway's pod); PeerAuthentication does not apply to gateway listeners.
 */
export interface RouterSecurity {
  /** Keys of the label-selected AuthorizationPolicies and RequestAuthentications, sorted and joined by `,`. */
  readonly key: string;
  /** HCM filters before the router: CUSTOM, jwt_authn (clearing the route cache), AUDIT/DENY/ALLOW. */
  readonly httpFilters: readonly AuthzFilter[];
  /** Network filters before tcp_proxy on TCP, TLS-terminated and PASSTHROUGH chains. */
  readonly tcpFilters: readonly AuthzFilter[];
  /** The AuthorizationPolicies that apply, by action (for diagnostics). */
  readonly authz: WorkloadPolicies;
}

/** A label-selected policy, for the relay: it applies to workloads of `namespace` whose labels it selects. */
export interface PolicySelector {
  readonly namespace: string;
  readonly policy: string;
  readonly selector: Readonly<Record<string, string>>;
}

export interface SecurityIndex {
  forWorkload(namespace: string, labels: Readonly<Record<string, string>>): WorkloadSecurity;
  forRouter(namespace: string, labels: Readonly<Record<string, string>>): RouterSecurity;
  /** Mesh/namespace PeerAuthentication mode of a namespace, undefined without one (client-side auto mTLS). */
  namespaceMtlsMode(namespace: string): MtlsSettings['mode'] | undefined;
  readonly policySelectors: readonly PolicySelector[];
  readonly trustDomain: TrustDomainBundle;
  /** The RequestAuthentications sidecars enforce (their jwksUri hosts need clusters). */
  readonly requestAuthentications: readonly RequestAuthentication[];
}

export const NO_ROUTER_SECURITY: RouterSecurity = {
  key: '',
  httpFilters: [],
  tcpFilters: [],
  authz: { custom: [], deny: [], audit: [], allow: [] },
};

export const NO_SECURITY: WorkloadSecurity = {
  key: '',
  mtls: PERMISSIVE_ONLY,
  httpFilters: [],
  tcpFilters: [],
  authz: { custom: [], deny: [], audit: [], allow: [] },
};

/** A mesh without security policies (test contexts, scratch compiles). */
export const NO_SECURITY_INDEX: SecurityIndex = {
  forWorkload: () => NO_SECURITY,
  forRouter: () => NO_ROUTER_SECURITY,
  namespaceMtlsMode: () => undefined,
  policySelectors: [],
  trustDomain: trustDomainBundle(DEFAULT_TRUST_DOMAIN),
  requestAuthentications: [],
};

export const authzPolicyKey = (p: AuthorizationPolicy): string => `authz:${p.meta.namespace}/${p.meta.name}`;
export const peerAuthnKey = (p: PeerAuthentication): string => `peer:${p.meta.namespace}/${p.meta.name}`;
export const requestAuthnKey = (p: RequestAuthentication): string => `jwt:${p.meta.namespace}/${p.meta.name}`;

/** Policies that apply to sidecars: targetRef(s) attach to gateways and waypoints. */
const forSidecars = (p: AuthorizationPolicy | RequestAuthentication): boolean =>
  !p.spec.targetRef && !p.spec.targetRefs?.length;

export function authzOptions(mesh: MeshConfig, model: ServiceModel): AuthzOptions {
  const lookupService: ServiceLookup = (service, port) => {
    const svc = providerService(model, service);
    return svc && { hostname: svc.hostname, cluster: outboundClusterName(port, '', svc.hostname) };
  };
  return {
    trustDomain: trustDomainBundle(mesh.trustDomain ?? DEFAULT_TRUST_DOMAIN, mesh.trustDomainAliases ?? []),
    extensionProviders: mesh.extensionProviders ?? [],
    lookupService,
  };
}

export function indexSecurity(inputs: InputSet, model: ServiceModel, diags: Diagnostics): SecurityIndex {
  const mesh = inputs.meshConfig;
  const root = mesh.rootNamespace;
  const authz = inputs.authorizationPolicies.filter(forSidecars);
  const jwt = inputs.requestAuthentications.filter(forSidecars);
  const peer = indexPeerAuthentications(inputs.peerAuthentications, root);
  const opts = authzOptions(mesh, model);
  reportPolicyDiagnostics(inputs, model, opts, peer, diags);

  const cache = new Map<string, WorkloadSecurity>();
  const filtersOf = (
    policies: WorkloadPolicies,
    requestAuthns: readonly RequestAuthentication[],
    clearRouteCache = false,
  ) => {
    const jwtFilter = buildJwtFilter(requestAuthns, { clearRouteCache });
    return {
      httpFilters: [
        ...buildHttpAuthzFilters({ ...policies, deny: [], audit: [], allow: [] }, opts),
        ...(jwtFilter ? [jwtFilter] : []),
        ...buildHttpAuthzFilters({ ...policies, custom: [] }, opts),
      ],
      tcpFilters: buildTcpAuthzFilters(policies, opts),
      authz: policies,
    };
  };

  const policySelectors: PolicySelector[] = [];
  for (const p of authz) {
    if (!hasSelector(p)) continue;
    const selector = p.spec.selector?.matchLabels ?? {};
    const namespaces = p.meta.namespace === root ? model.namespaces : [p.meta.namespace];
    for (const namespace of namespaces) policySelectors.push({ namespace, policy: authzPolicyKey(p), selector });
  }
  for (const p of jwt) {
    if (!hasSelector(p)) continue;
    const selector = p.spec.selector?.matchLabels ?? {};
    const namespaces = p.meta.namespace === root ? model.namespaces : [p.meta.namespace];
    for (const namespace of namespaces) policySelectors.push({ namespace, policy: requestAuthnKey(p), selector });
  }
  for (const p of inputs.peerAuthentications) {
    if (!hasSelector(p) || p.meta.namespace === root) continue;
    policySelectors.push({
      namespace: p.meta.namespace,
      policy: peerAuthnKey(p),
      selector: p.spec.selector?.matchLabels ?? {},
    });
  }

  const selectorsByNamespace = new Map<string, PolicySelector[]>();
  for (const s of policySelectors) {
    const list = selectorsByNamespace.get(s.namespace);
    if (list) list.push(s);
    else selectorsByNamespace.set(s.namespace, [s]);
  }
  /** Keys of the label-selected policies of the namespace that select the labels, sorted and joined. */
  const selectedKey = (namespace: string, labels: Readonly<Record<string, string>>): string => {
    const candidates = selectorsByNamespace.get(namespace);
    if (!candidates) return '';
    return candidates
      .filter((s) => selects(s.selector, labels))
      .map((s) => s.policy)
      .sort()
      .join(',');
  };

  const routerCache = new Map<string, RouterSecurity>();
  const routerKey = (namespace: string, labels: Readonly<Record<string, string>>) =>
    policySelectors
      .filter((s) => s.namespace === namespace && appliesToRouters(s.policy) && selects(s.selector, labels))
      .map((s) => s.policy)
      .sort()
      .join(',');

  return {
    policySelectors,
    requestAuthentications: jwt,
    trustDomain: opts.trustDomain ?? trustDomainBundle(DEFAULT_TRUST_DOMAIN),
    namespaceMtlsMode: (namespace) => peer.namespaceMode(namespace),
    forWorkload(namespace, labels) {
      const key = selectedKey(namespace, labels);
      const cacheKey = `${namespace}\n${key}`;
      const hit = cache.get(cacheKey);
      if (hit) return hit;
      // The namespace and the label-selected policies (the key) decide which policies apply.
      const applying = policiesForWorkload(authz, { namespace, labels }, root);
      const requestAuthns = policiesForWorkload(jwt, { namespace, labels }, root);
      const security: WorkloadSecurity =
        applying.length === 0 && requestAuthns.length === 0 && inputs.peerAuthentications.length === 0
          ? key === ''
            ? NO_SECURITY // one object for the whole mesh: its passthrough chains are built once
            : { ...NO_SECURITY, key }
          : {
              key,
              mtls: peer.forWorkload(namespace, labels),
              ...filtersOf(groupByAction(applying), requestAuthns),
            };
      cache.set(cacheKey, security);
      return security;
    },
    forRouter(namespace, labels) {
      const key = routerKey(namespace, labels);
      const cacheKey = `${namespace}\n${key}`;
      const hit = routerCache.get(cacheKey);
      if (hit) return hit;
      const applying = policiesForWorkload(authz, { namespace, labels }, root);
      const requestAuthns = policiesForWorkload(jwt, { namespace, labels }, root);
      const security: RouterSecurity =
        applying.length === 0 && requestAuthns.length === 0
          ? { ...NO_ROUTER_SECURITY, key }
          : { key, ...filtersOf(groupByAction(applying), requestAuthns, true) };
      routerCache.set(cacheKey, security);
      return security;
    },
  };
}

/**
 * CDS: outbound clusters for every service port and DestinationRule subset, plus the fixed
 * clusters, as istiod builds them for sidecars (pilot/pkg/networking/core/cluster*.go), or the
 * reduced set proxyless gRPC clients accept (generator 'grpc', see cluster/grpc.ts).
 *
 * Left out on purpose: the `istio.metadata_exchange` upstream network filter (meshsnap does not
 * ship that Istio-specific extension's proto) and mesh-wide defaults meshsnap's MeshConfig does
 * not carry (h2UpgradePolicy, tcpKeepalive, defaultTrafficPolicy, localityLbSetting).
 */
import type { Diagnostics } from '../model/diagnostics.js';
import type { ClientTLSSettings, DestinationRuleSpec } from '../model/istio.js';
import { applyUpstreamProxyProtocol } from './cluster/proxy-protocol.js';
import { DEFAULT_DNS_REFRESH_RATE_MS } from '../model/mesh-config.js';
import type { MeshService } from '../model/service-model.js';
import { envoy, durationMs, type Cluster, type Metadata } from '../xds/proto.js';
import type { CompileContext } from './context.js';
import { blackHoleCluster, inboundPassthroughCluster, passthroughCluster } from './cluster/fixed.js';
import { grpcCluster } from './cluster/grpc.js';
import { NO_LB_CONFIG } from './cluster/shared-parts.js';
import { deepFreeze } from './intern.js';
import { planServiceClusters, type Discovery, type PlannedCluster } from './cluster/plan.js';
import { wrappedLocalityEndpoints } from './endpoints.js';
import type { WrappedLocality } from './locality-lb.js';
import { recordLocalityVariants } from './locality-variants.js';
import { istioConfigMetadata, ruleClusterMetadata, serviceMetadata } from './metadata.js';
import { dfpClusterType } from './dynamic-forward-proxy.js';
import { istioMtlsSni } from './names.js';
import { NameOrderedTable } from './sorted.js';
import {
  autoMtlsSocketMatches,
  istioMutualTransportSocket,
  spiffeId,
  tlsTransportSocket,
  userTlsContext,
} from './tls.js';
import {
  applyConnectionPool,
  applyH2Upgrade,
  applyLoadBalancer,
  applyOutlierDetection,
  applyPortProtocol,
  finishDraft,
  type ClusterDraft,
} from './traffic-policy.js';

const { DiscoveryType, DnsLookupFamily, LbPolicy } = envoy.config.cluster.v3.Cluster;
const V3 = envoy.config.core.v3.ApiVersion.V3;

/** istiod's EDS source: ADS, never block on the first fetch. Shared by every EDS cluster. */
const EDS_CONFIG: envoy.config.core.v3.ConfigSource.$Properties = deepFreeze({
  ads: {},
  initial_fetch_timeout: durationMs(0),
  resource_api_version: V3,
});
/** MeshConfig.dnsRefreshRate default, shared by every DNS cluster that keeps it. */
const DNS_REFRESH_RATE = durationMs(DEFAULT_DNS_REFRESH_RATE_MS);

const DISCOVERY_TYPES: Readonly<Record<Exclude<Discovery, 'DFP'>, envoy.config.cluster.v3.Cluster.DiscoveryType>> = {
  EDS: DiscoveryType.EDS,
  ORIGINAL_DST: DiscoveryType.ORIGINAL_DST,
  STRICT_DNS: DiscoveryType.STRICT_DNS,
  LOGICAL_DNS: DiscoveryType.LOGICAL_DNS,
};

type LocalityLbEndpoints = envoy.config.endpoint.v3.LocalityLbEndpoints.$Properties;

function externalNameEndpoints(externalName: string, port: number): LocalityLbEndpoints[] {
  return [
    {
      locality: {},
      lb_endpoints: [
        {
          endpoint: { address: { socket_address: { address: externalName, port_value: port } } },
          load_balancing_weight: { value: 1 },
        },
      ],
      load_balancing_weight: { value: 1 },
    },
  ];
}

/** A DNS ServiceEntry's endpoints inline; LOGICAL_DNS takes one (Envoy refuses more), as istiod's merge keeps one. */
function dnsEndpoints(ctx: CompileContext, plan: PlannedCluster): WrappedLocality[] {
  const all = wrappedLocalityEndpoints(ctx, plan);
  if (plan.discovery !== 'LOGICAL_DNS') return all;
  const first = all[0];
  const ep = first?.lle.lb_endpoints?.[0];
  return first && ep
    ? [
        {
          lle: { ...first.lle, lb_endpoints: [ep], load_balancing_weight: ep.load_balancing_weight ?? { value: 1 } },
          members: first.members.slice(0, 1),
        },
      ]
    : [];
}

/** The clusters of every service (and for sidecars the fixed ones), in name order. */
export function buildClusters(ctx: CompileContext, generator: 'sidecar' | 'grpc'): Map<string, Cluster> {
  const out = new NameOrderedTable<Cluster>();
  // Diagnostics are the same for both generators: report them once, from the sidecar pass.
  const diags = generator === 'sidecar' ? ctx.diags : undefined;
  for (const service of ctx.model.services) {
    for (const [name, c] of buildServiceClusters(ctx, service, generator, diags)) out.add(name, c);
  }
  if (generator === 'sidecar') {
    for (const c of [blackHoleCluster(ctx.mesh), passthroughCluster(ctx.mesh), inboundPassthroughCluster(ctx.mesh)])
      out.set(c.name as string, c);
  }
  return out.toMap();
}

/** The clusters of one service (for incremental compiles); `diags` receives problems with its DestinationRule. */
export function buildServiceClusters(
  ctx: CompileContext,
  service: MeshService,
  generator: 'sidecar' | 'grpc',
  diags?: Diagnostics,
): Map<string, Cluster> {
  const out = new Map<string, Cluster>();
  const plans = planServiceClusters(ctx, service);
  if (generator === 'grpc') {
    for (const plan of plans) {
      const c = grpcCluster(plan);
      if (c) out.set(plan.name, c);
    }
    return out;
  }
  const sans = serviceIdentities(ctx, service);
  // Clusters without a DestinationRule share one metadata object (it is only read when encoding),
  // those with one one per subset and ALPN override (the ports of a subset share it).
  const plainMeta = serviceMetadata(service);
  const ruleMeta = new Map<string, Metadata>();
  const metadataOf = (plan: PlannedCluster): Metadata => {
    const source = plan.rule?.sources[0];
    if (!source) return plainMeta;
    const mode = plan.policy?.tls?.mode;
    const alpnOverride = mode === 'SIMPLE' || mode === 'MUTUAL';
    const key = `${alpnOverride}|${plan.subsetName}`;
    let meta = ruleMeta.get(key);
    if (!meta) ruleMeta.set(key, (meta = ruleClusterMetadata(service, source, plan.subsetName, alpnOverride)));
    return meta;
  };
  const reported = new Set<string>();
  const report = diags
    ? (key: string, f: (d: Diagnostics) => void) => {
        if (!reported.has(key)) {
          reported.add(key);
          f(diags);
        }
      }
    : undefined;
  // A DNS cluster without endpoints (an entry selecting no workload) is kept without hosts: istiod
  // sends none, but routes name it and both answer 503.
  for (const plan of plans)
    out.set(
      plan.name,
      plan.discovery === 'DFP'
        ? dfpCluster(ctx, plan, report)
        : sidecarCluster(ctx, plan, sans, report, metadataOf(plan)),
    );
  return out;
}

type Reporter = ((key: string, f: (d: Diagnostics) => void) => void) | undefined;

function sidecarCluster(
  ctx: CompileContext,
  plan: PlannedCluster,
  sans: readonly string[],
  report: Reporter,
  metadata: Metadata,
): Cluster {
  const { service, port, sidecarPolicy: policy } = plan;
  const discovery = plan.discovery === 'DFP' ? 'EDS' : plan.discovery;
  const draft: ClusterDraft = {
    cluster: {
      name: plan.name,
      type: DISCOVERY_TYPES[discovery],
      alt_stat_name: plan.altStatName,
      common_lb_config: NO_LB_CONFIG,
    },
  };
  const c = draft.cluster;
  let dns: WrappedLocality[] | undefined;
  if (plan.discovery === 'STRICT_DNS' || plan.discovery === 'LOGICAL_DNS') {
    // The proxy resolves the names itself; IPv4 as istiod picks for IPv4-only proxies.
    c.dns_lookup_family = DnsLookupFamily.V4_ONLY;
    c.dns_refresh_rate =
      ctx.mesh.dnsRefreshRateMs === undefined ? DNS_REFRESH_RATE : durationMs(ctx.mesh.dnsRefreshRateMs);
    c.respect_dns_ttl = true;
    c.load_assignment = {
      cluster_name: plan.name,
      endpoints:
        service.externalName !== undefined
          ? externalNameEndpoints(service.externalName, port.port)
          : (dns = dnsEndpoints(ctx, plan)).map((w) => w.lle),
    };
    // Envoy refuses a LOGICAL_DNS cluster without exactly one endpoint: with none, a STRICT_DNS one without hosts.
    if (!c.load_assignment.endpoints?.length) c.type = DiscoveryType.STRICT_DNS;
  } else if (
    plan.discovery === 'ORIGINAL_DST' &&
    service.serviceEntry?.resolution === 'NONE' &&
    port.targetPort !== port.port
  ) {
    // A NONE entry's targetPort rewrites the destination port (istiod's PassthroughTargetPorts).
    c.original_dst_lb_config = { upstream_port_override: { value: port.targetPort as number } };
  }
  applyPortProtocol(draft, port.protocol);

  applyH2Upgrade(draft, policy?.connectionPool, port.protocol, ctx.mesh.h2Upgrade === true);
  applyConnectionPool(draft, policy?.connectionPool, ctx.mesh, policy?.retryBudget);
  applyOutlierDetection(c, policy?.outlierDetection);
  applyLoadBalancer(c, policy?.loadBalancer, ctx.mesh, plan.service.trafficDistribution);
  applyTls(ctx, plan, draft, sans, report);
  applyUpstreamProxyProtocol(c, policy?.proxyProtocol);

  if (c.type === DiscoveryType.EDS) c.eds_cluster_config = { service_name: plan.name, eds_config: EDS_CONFIG };

  c.metadata = metadata;
  const cluster = finishDraft(draft);
  // istiod's ApplyToCluster: a DNS cluster's inline endpoints get the proxy's locality priorities,
  // failover where the cluster has outlier detection (the mesh's default policy included).
  if (dns && cluster.load_assignment)
    recordLocalityVariants(
      ctx,
      {
        loadBalancer: policy?.loadBalancer,
        outlierDetection: cluster.outlier_detection != null,
        trafficDistribution: service.trafficDistribution,
      },
      cluster,
      dns,
      (endpoints) => Object.freeze({ ...cluster, load_assignment: { ...cluster.load_assignment, endpoints } }),
    );
  return cluster;
}

/**
 * A `DYNAMIC_DNS` host's cluster (istiod's buildDFPCluster and applyDestinationRule): Envoy's
 * dynamic forward proxy, `CLUSTER_PROVIDED`, no endpoints, the port's protocol, the connection
 * pool and outlier detection of the DestinationRule (its load balancer does not apply), and its TLS
 * as dfpTls builds it. Metadata: the rule's config (and ALPN override) only, as istiod's (no `services`).
 */
function dfpCluster(ctx: CompileContext, plan: PlannedCluster, report: Reporter): Cluster {
  const { port, sidecarPolicy: policy } = plan;
  const draft: ClusterDraft = {
    cluster: { name: plan.name, alt_stat_name: plan.altStatName, lb_policy: LbPolicy.CLUSTER_PROVIDED },
  };
  const c = draft.cluster;
  applyPortProtocol(draft, port.protocol);
  applyH2Upgrade(draft, policy?.connectionPool, port.protocol, ctx.mesh.h2Upgrade === true);
  applyConnectionPool(draft, policy?.connectionPool, ctx.mesh, policy?.retryBudget);
  applyOutlierDetection(c, policy?.outlierDetection);
  let allowInsecure = dfpTls(ctx, plan, draft, report);
  applyUpstreamProxyProtocol(c, policy?.proxyProtocol);
  // Envoy refuses a DFP cluster whose upstream HTTP options (typed, once the cluster has any) lack
  // auto_sni and auto_san_validation, unless allow_insecure_cluster_options is set; without typed
  // options Envoy sets both itself. istiod sends such a cluster (an HTTP2/GRPC port, or a pool
  // setting, without TLS) as is and Envoy NACKs it; meshsnap allows the insecure options there, as
  // istiod does for its ALLOW_ANY_DYNAMIC_DNS cluster when no upstream TLS is set.
  const upstream = draft.http?.upstream_http_protocol_options;
  if (draft.http && !(upstream?.auto_sni && upstream.auto_san_validation)) allowInsecure = true;
  c.cluster_type = dfpClusterType(plan.service.hostname, allowInsecure);
  const source = plan.rule?.sources[0];
  if (source) {
    const mode = plan.policy?.tls?.mode;
    c.metadata = istioConfigMetadata(
      source,
      mode === 'SIMPLE' || mode === 'MUTUAL' ? { alpn_override: 'false' } : undefined,
    );
  }
  return finishDraft(draft);
}

/** The rule's SIMPLE / MUTUAL TLS context (the mesh's tlsDefaults under it), or undefined with an error said. */
function originatedTls(
  ctx: CompileContext,
  plan: PlannedCluster,
  tls: ClientTLSSettings,
  http2: boolean,
  report: Reporter,
): Exclude<ReturnType<typeof userTlsContext>, string> | undefined {
  const context = userTlsContext(tls, http2, ctx.mesh.tlsDefaults);
  if (typeof context !== 'string') return context;
  const message =
    context === 'inline-key-material'
      ? 'clientCertificate, privateKey and caCertificates are file paths on the proxy, not PEM content; no TLS is originated'
      : 'MUTUAL TLS needs clientCertificate and privateKey (file paths) or a credentialName; no TLS is originated';
  reportTls(plan, report, 'invalid-tls', 'error', message);
  return undefined;
}

/**
 * A rule's `credentialName` (not a `configmap://` CA) on a sidecar's cluster: istiod does not hand
 * secrets named by a rule without workloadSelector to every sidecar, so no TLS is originated; said.
 */
function ignoredCredential(plan: PlannedCluster, tls: ClientTLSSettings, report: Reporter): boolean {
  if (!tls.credentialName || tls.credentialName.startsWith('configmap://')) return false;
  reportTls(
    plan,
    report,
    'credential-name-ignored',
    'warning',
    `credentialName ${tls.credentialName} is only honoured for gateways or DestinationRules with a workloadSelector; no TLS is originated`,
  );
  return true;
}

/**
 * istiod's TLS of a DFP cluster (buildUpstreamTLSSettings, buildUpstreamClusterTLSContext with
 * isDFPCluster): no SNI of Istio's (`outbound_.<port>_._.<host>` names no real host) and no service
 * accounts (neither the workloads' nor the entry's subjectAltNames); instead auto_sni (without an
 * `sni` in the rule) and auto_san_validation (unless insecureSkipVerify) follow each request's host.
 * ISTIO_MUTUAL by the rule, or auto mTLS to a MESH_INTERNAL entry (transport socket matches, as for
 * other services); SIMPLE/MUTUAL by the rule. Returns whether istiod sets
 * allow_insecure_cluster_options (insecureSkipVerify, an `sni`, or no SAN check).
 */
function dfpTls(ctx: CompileContext, plan: PlannedCluster, draft: ClusterDraft, report: Reporter): boolean {
  const c = draft.cluster;
  const tls = plan.policy?.tls;
  const http2 = isHttp2Draft(draft);
  if (tls) {
    if (tls.mode === 'DISABLE') return false;
    if (tls.mode === 'ISTIO_MUTUAL') {
      c.transport_socket = istioMutualTransportSocket({
        sni: tls.sni ?? '',
        subjectAltNames: tls.subjectAltNames ?? [],
        http2,
      });
      return applyDfpAutoSni(draft, tls);
    }
    if (ignoredCredential(plan, tls, report)) return false;
    const context = originatedTls(ctx, plan, tls, http2, report);
    if (!context) return false;
    c.transport_socket = tlsTransportSocket(context);
    return applyDfpAutoSni(draft, tls);
  }
  if (!ctx.mesh.enableAutoMtls || plan.service.serviceEntry?.location === 'MESH_EXTERNAL') return false;
  if (ctx.security.namespaceMtlsMode(plan.service.namespace) === 'DISABLE') return false;
  c.transport_socket_matches = autoMtlsSocketMatches(
    istioMutualTransportSocket({ sni: '', subjectAltNames: [], http2 }),
  );
  return applyDfpAutoSni(draft, { mode: 'ISTIO_MUTUAL' });
}

/** istiod's setAutoSniAndAutoSanValidation for a DFP cluster; returns allow_insecure_cluster_options. */
function applyDfpAutoSni(draft: ClusterDraft, tls: ClientTLSSettings): boolean {
  const autoSni = !tls.sni;
  const autoSan = !tls.insecureSkipVerify;
  if (autoSni || autoSan) {
    draft.http ??= {};
    draft.http.upstream_http_protocol_options = {
      ...(autoSni ? { auto_sni: true } : {}),
      ...(autoSan ? { auto_san_validation: true } : {}),
    };
  }
  return !autoSni || !autoSan;
}

/**
 * SPIFFE identities of the workloads behind a service, for SAN checks under Istio mTLS; a
 * ServiceEntry's `subjectAltNames` are added as written (istiod's service accounts of a service).
 */
function serviceIdentities(ctx: CompileContext, service: MeshService): string[] {
  const accounts: string[] = [];
  for (const eps of ctx.model.endpoints.get(service.hostname)?.values() ?? []) {
    for (const ep of eps)
      if (ep.serviceAccount && !accounts.includes(ep.serviceAccount)) accounts.push(ep.serviceAccount);
  }
  const ids = accounts.map((sa) => spiffeId(service.namespace, sa));
  for (const san of service.serviceEntry?.subjectAltNames ?? []) if (!ids.includes(san)) ids.push(san);
  return ids.sort();
}

const isHttp2Draft = (draft: ClusterDraft): boolean => draft.http?.explicit_http_config?.http2_protocol_options != null;

/**
 * istiod's buildUpstreamTLSSettings + applyUpstreamTLSSettings: the DestinationRule's TLS when set,
 * otherwise auto mTLS (unless turned off, or the service is external). Auto mTLS on an
 * ORIGINAL_DST cluster is all-or-nothing: Istio mTLS only when every endpoint has a sidecar.
 */
function applyTls(
  ctx: CompileContext,
  plan: PlannedCluster,
  draft: ClusterDraft,
  sans: readonly string[],
  report: Reporter,
): void {
  const c = draft.cluster;
  const tls = plan.policy?.tls;
  const sni = istioMtlsSni(plan.port.port, plan.subsetName, plan.service.hostname);
  const http2 = isHttp2Draft(draft);
  if (tls) {
    if (tls.mode === 'DISABLE') return;
    if (tls.mode === 'ISTIO_MUTUAL') {
      c.transport_socket = istioMutualTransportSocket({
        sni: tls.sni || sni,
        subjectAltNames: tls.subjectAltNames ?? sans,
        http2,
      });
      return;
    }
    if (ignoredCredential(plan, tls, report)) return;
    const entry = plan.service.serviceEntry;
    // A ServiceEntry's subjectAltNames check the server when the rule names none (istiod, External registry).
    const withSans =
      entry && !tls.subjectAltNames?.length && entry.subjectAltNames.length
        ? { ...tls, subjectAltNames: entry.subjectAltNames }
        : tls;
    const context = originatedTls(ctx, plan, withSans, http2, report);
    if (!context) return;
    c.transport_socket = tlsTransportSocket(context);
    if (entry) applyAutoSni(draft, withSans);
    return;
  }
  // No auto mTLS to what is outside the mesh (ExternalName, MESH_EXTERNAL entries): Istio mTLS there only by a DestinationRule.
  if (!ctx.mesh.enableAutoMtls || plan.service.externalName !== undefined) return;
  if (plan.service.serviceEntry?.location === 'MESH_EXTERNAL') return;
  // istiod's BestEffortInferServiceMTLSMode: a mesh/namespace PeerAuthentication DISABLE turns auto mTLS off.
  if (ctx.security.namespaceMtlsMode(plan.service.namespace) === 'DISABLE') return;
  if (c.type === DiscoveryType.ORIGINAL_DST) {
    const eps = ctx.model.endpoints.get(plan.service.hostname)?.get(plan.port.port) ?? [];
    if (eps.length === 0 || eps.some((ep) => ep.tlsMode !== 'istio')) return;
    c.transport_socket = istioMutualTransportSocket({ sni, subjectAltNames: sans, http2 });
    return;
  }
  c.transport_socket_matches = autoMtlsSocketMatches(istioMutualTransportSocket({ sni, subjectAltNames: sans, http2 }));
}

/**
 * istiod's setAutoSniAndAutoSanValidation: without an `sni`, the SNI (and, without SANs or
 * insecureSkipVerify, the SAN check) follow the request's Host. Applied to ServiceEntry hosts,
 * where TLS origination to external names needs it; Kubernetes services keep their clusters as before.
 */
function applyAutoSni(draft: ClusterDraft, tls: ClientTLSSettings): void {
  if (tls.sni) return;
  const autoSan = !tls.subjectAltNames?.length && !tls.insecureSkipVerify;
  draft.http ??= {};
  draft.http.upstream_http_protocol_options = { auto_sni: true, ...(autoSan ? { auto_san_validation: true } : {}) };
}

/** Points at the `tls` field of the rule (subset or top level) that set it. */
function reportTls(
  plan: PlannedCluster,
  report: Reporter,
  code: string,
  severity: 'warning' | 'error',
  message: string,
): void {
  if (!report || !plan.rule) return;
  const tls = plan.policy?.tls as ClientTLSSettings;
  for (const dr of plan.rule.sources) {
    const field = tlsField(dr.spec, tls);
    if (field === undefined) continue;
    report(`${code}|${dr.meta.namespace}/${dr.meta.name}|${field}`, (d) =>
      d.add({
        severity,
        code,
        message,
        kind: 'DestinationRule',
        namespace: dr.meta.namespace,
        name: dr.meta.name,
        field,
        file: dr.origin.file,
        index: dr.origin.index,
      }),
    );
    return;
  }
}

function tlsField(spec: DestinationRuleSpec, tls: ClientTLSSettings): string | undefined {
  if (spec.trafficPolicy?.tls === tls) return 'spec.trafficPolicy.tls';
  const pl = spec.trafficPolicy?.portLevelSettings?.findIndex((p) => p.tls === tls) ?? -1;
  if (pl >= 0) return `spec.trafficPolicy.portLevelSettings[${pl}].tls`;
  const subsets = spec.subsets ?? [];
  for (let i = 0; i < subsets.length; i++) {
    const tp = subsets[i]?.trafficPolicy;
    if (tp?.tls === tls) return `spec.subsets[${i}].trafficPolicy.tls`;
    const j = tp?.portLevelSettings?.findIndex((p) => p.tls === tls) ?? -1;
    if (j >= 0) return `spec.subsets[${i}].trafficPolicy.portLevelSettings[${j}].tls`;
  }
  return undefined;
}

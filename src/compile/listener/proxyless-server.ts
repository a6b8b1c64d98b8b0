/**
 * Inbound listeners of proxyless gRPC servers (istiod: grpcgen/lds.go buildInboundListeners). An
 * xDS-enabled gRPC server (gRFC A36) asks for the Listener named after its listening address
 * through its bootstrap's `server_listener_resource_name_template`: Istio's agent writes
 * `xds.istio.io/grpc/lds/inbound/%s`, gRFC A36 suggests `grpc/server?xds.resource.listening_address=%s`.
 * Both names are served.
 *
 * One listener per pod IP and per wildcard address (0.0.0.0, [::]) for each gRPC target port of
 * the services selecting the pod (Services by selector, ServiceEntries by workloadSelector; a named
 * targetPort resolved through the pod's own endpoint) (istiod answers for any port, but only gRPC servers ask; other
 * ports are left out to keep snapshots small): one filter chain, no match, an HCM whose only route is a
 * non-forwarding action (the server handles the call), the RBAC filters, the router. mTLS per
 * PeerAuthentication as istiod: STRICT (or PERMISSIVE on a pod labelled for Istio mTLS, whose
 * clients will use it) needs a client certificate from the `default` certificate provider;
 * PERMISSIVE otherwise and DISABLE are plaintext (gRPC cannot match on transport protocol).
 *
 * A wildcard address names no pod, so its listener is served only when every pod of the
 * namespace listening on that port gets the same one; otherwise it is left out (the server then
 * serves nothing, rather than another pod's looser policy) with a diagnostic.
 */
import { canonicalJson } from '../../canonical-json.js';
import { workloadSelectorOf, type MeshService, type Workload } from '../../model/service-model.js';
import { selects } from '../../proxy-class/class-id.js';
import { envoy, packAny, type HttpConnectionManager, type Listener } from '../../xds/proto.js';
import { TypeName } from '../../xds/type-urls.js';
import type { CompileContext } from '../context.js';
import { deepFreeze } from '../intern.js';
import { buildGrpcServerRbacFilters } from '../security/authz/grpc-server.js';
import { modeForPort } from '../security/peer-authn.js';
import type { WorkloadSecurity } from '../security/workload-security.js';
import { FilterName, ROUTER_FILTER, socketAddress, type HttpFilter } from './filters.js';
import { isGrpcFamily } from './inbound-chains.js';
import { inboundPorts } from './inbound-ports.js';

export const SERVER_LISTENER_PREFIXES = [
  'xds.istio.io/grpc/lds/inbound/',
  'grpc/server?xds.resource.listening_address=',
] as const;
const WILDCARDS = ['0.0.0.0', '[::]'] as const;
const ISTIO_TLS_MODE_LABEL = 'security.istio.io/tlsMode';

type FilterChain = envoy.config.listener.v3.FilterChain.$Properties;

const providerInstance = (certificate: string) => ({ instance_name: 'default', certificate_name: certificate });

/** istiod's buildCommonTLSContext: certificates from the bootstrap's `default` certificate provider. */
const MTLS_SOCKET = deepFreeze({
  name: FilterName.TlsTransportSocket,
  typed_config: packAny(TypeName.DownstreamTlsContext, {
    common_tls_context: {
      tls_certificate_provider_instance: providerInstance('default'),
      tls_certificate_certificate_provider_instance: providerInstance('default'),
      combined_validation_context: {
        default_validation_context: { ca_certificate_provider_instance: providerInstance('ROOTCA') },
        validation_context_certificate_provider_instance: providerInstance('ROOTCA'),
      },
    },
    require_client_certificate: { value: true },
  }),
});

function filterChain(security: WorkloadSecurity, mtls: boolean, ctx: CompileContext): FilterChain {
  const suffix = mtls ? 'mtls' : 'plaintext';
  const hcm: HttpConnectionManager = {
    route_config: {
      name: 'inbound',
      virtual_hosts: [{ domains: ['*'], routes: [{ match: { prefix: '/' }, non_forwarding_action: {} }] }],
    },
    http_filters: [
      ...(buildGrpcServerRbacFilters(security.authz, ctx.security.trustDomain) as HttpFilter[]),
      ROUTER_FILTER,
    ],
  };
  return {
    name: `inbound-${suffix}`,
    filters: [{ name: `inbound-hcm${suffix}`, typed_config: packAny(TypeName.HttpConnectionManager, hcm) }],
    ...(mtls ? { transport_socket: MTLS_SOCKET } : {}),
  };
}

function serverChains(ctx: CompileContext, workload: Workload, targetPort: number): FilterChain[] {
  const security = ctx.security.forWorkload(workload.namespace, workload.labels);
  let mode = modeForPort(security.mtls, targetPort);
  if (mode === 'PERMISSIVE') mode = workload.labels[ISTIO_TLS_MODE_LABEL] === 'istio' ? 'STRICT' : 'DISABLE';
  return [filterChain(security, mode === 'STRICT', ctx)];
}

function listener(name: string, host: string, port: number, chains: FilterChain[]): Listener {
  const bare = host.startsWith('[') ? host.slice(1, -1) : host;
  return { name, address: socketAddress(bare, port), filter_chains: chains };
}

/** A Service's selector or a ServiceEntry's workloadSelector: istiod's ServiceTargets come from both. */
const selectorOf = (s: MeshService): Readonly<Record<string, string>> | undefined => {
  const selector = workloadSelectorOf(s);
  return selector && Object.keys(selector).length > 0 ? selector : undefined;
};

/** The server listeners of a namespace's pods, by name. */
export function buildProxylessServerListeners(
  ctx: CompileContext,
  namespace: string,
  services: readonly MeshService[],
  workloads: readonly Workload[],
): Map<string, Listener> {
  const out = new Map<string, Listener>();
  const byPort = new Map<number, { chains: FilterChain[]; key: string; pods: string[] }[]>();
  const add = (host: string, port: number, chains: FilterChain[]) => {
    for (const prefix of SERVER_LISTENER_PREFIXES) {
      const name = `${prefix}${host}:${port}`;
      out.set(name, listener(name, host, port, chains));
    }
  };
  // Services with a selector, found once per namespace rather than once per pod.
  const selectorServices = services.flatMap((s) => {
    const selector = selectorOf(s);
    return selector ? [{ s, selector }] : [];
  });
  // Only gRPC ports get listeners: without one in the namespace there is nothing to match pods for.
  if (!selectorServices.some((x) => x.s.ports.some((p) => isGrpcFamily(p.protocol)))) return out;
  for (const w of workloads) {
    const selecting = selectorServices.filter((x) => selects(x.selector, w.labels)).map((x) => x.s);
    for (const p of inboundPorts(ctx, selecting, w.ips)) {
      if (!isGrpcFamily(p.port.protocol)) continue;
      const chains = serverChains(ctx, w, p.targetPort);
      for (const ip of w.ips) add(ip.includes(':') ? `[${ip}]` : ip, p.targetPort, chains);
      const list = byPort.get(p.targetPort) ?? [];
      list.push({ chains, key: canonicalJson(chains), pods: [w.name] });
      byPort.set(p.targetPort, list);
    }
  }
  for (const [port, list] of byPort) {
    const keys = new Set(list.map((x) => x.key));
    if (keys.size === 1) {
      for (const host of WILDCARDS) add(host, port, (list[0] as { chains: FilterChain[] }).chains);
      continue;
    }
    ctx.diags.warn({
      code: 'grpc-server-wildcard-ambiguous',
      message: `pods of namespace ${namespace} listening on port ${port} get different inbound security (${list
        .flatMap((x) => x.pods)
        .slice(0, 5)
        .join(', ')}…): a proxyless gRPC server listening on a wildcard address gets no listener; listen on the pod IP`,
      kind: 'Namespace',
      namespace,
      name: namespace,
    });
  }
  return new Map([...out.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

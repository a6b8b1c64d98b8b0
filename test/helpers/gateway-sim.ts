/**
 * A small request simulator over what a gateway proxy is served, in the spirit of Istio's
 * pilot/pkg/simulation: a call (port, TLS/SNI, Host, path) walks listener → filter chain → route
 * config → virtual host → route → cluster, and says where it stopped. Only what the gateway
 * tests need: exact/prefix/regex paths, SNI and ALPN chain matching, require_tls; and the filters a
 * call goes through (chainFilters), for the security tests.
 */
import { compileTexts, type PipelineResult } from '../../src/pipeline.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { served, type TestNode } from './mesh.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- walks decoded config_dump JSON */

export interface Call {
  readonly port: number;
  /** TLS with this SNI (and ALPN) when set; plain text otherwise. */
  readonly sni?: string;
  readonly alpn?: readonly string[];
  /** HTTP when set; raw TCP otherwise. */
  readonly host?: string;
  readonly path?: string;
}

export type SimError =
  'no-listener' | 'no-filter-chain' | 'multiple-filter-chains' | 'no-virtual-host' | 'no-route' | 'tls-redirect';

export interface SimResult {
  readonly error?: SimError;
  readonly listener?: string;
  readonly routeConfig?: string;
  readonly virtualHost?: string;
  readonly cluster?: string;
  /** A weighted route or tcp_proxy: every cluster with its weight. */
  readonly weighted?: readonly { name: string; weight: number }[];
  /** The filter chain's transport socket, when it terminates TLS. */
  readonly tls?: any;
}

export const INGRESS_NODE: TestNode = {
  id: 'router~10.244.0.20~istio-ingressgateway-0.istio-system~istio-system.svc.cluster.local',
  metadata: { NAMESPACE: 'istio-system', LABELS: { app: 'istio-ingressgateway', istio: 'ingressgateway' } },
};

/** The ingress gateway pod, and the backends the tests route to (namespace default). */
export const MESH_YAML = `
apiVersion: v1
kind: Pod
metadata: {name: istio-ingressgateway-0, namespace: istio-system, labels: {app: istio-ingressgateway, istio: ingressgateway}}
spec: {containers: [{name: istio-proxy, ports: [{containerPort: 8080}]}]}
status: {phase: Running, podIP: 10.244.0.20, podIPs: [{ip: 10.244.0.20}], conditions: [{type: Ready, status: "True"}]}
${['productpage:9080', 'a:80', 'b:80', 'b2:8081', 'mysite:443']
  .map((s, i) => {
    const [name, port] = s.split(':');
    return `---
apiVersion: v1
kind: Service
metadata: {name: ${name}, namespace: default}
spec: {clusterIP: 10.96.30.${i + 1}, selector: {app: ${name}}, ports: [{name: ${port === '443' ? 'https' : 'http'}, port: ${port}}]}`;
  })
  .join('\n')}
---
`;

/** A Gateway in `namespace` selecting the ingress pod, with the given server YAML blocks. */
export function gatewayYaml(name: string, namespace: string, ...servers: string[]): string {
  const indented = servers.map((s) => `  - ${s.trim().split('\n').join('\n    ')}`).join('\n');
  return `---
apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: ${name}, namespace: ${namespace}}
spec:
  selector: {istio: ingressgateway}
  servers:
${indented}
---
`;
}

/** A Gateway `default/gw` on port 80 for every host, its VirtualService routing to productpage; ends with a separator. */
export const PRODUCTPAGE_GATEWAY = `${gatewayYaml('gw', 'default', 'port: { number: 80, name: http, protocol: HTTP }\nhosts: ["*"]')}
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: { name: pp, namespace: default }
spec:
  hosts: ["*"]
  gateways: [default/gw]
  http: [{ route: [{ destination: { host: productpage } }] }]
---
`;

export function compileGateway(yaml: string): PipelineResult {
  return compileTexts([{ file: 'gateway-test.yaml', text: MESH_YAML + yaml }], { hasher: nodeSha256Hex });
}

type Served = ReturnType<typeof served>['resources'];

/** The listener and filter chain a call lands on, or where it stopped. */
function pickChain(resources: Served, call: Call): { listener?: any; chain?: any; error?: SimError } {
  const listener = [...resources.listeners.values()].find(
    (l: any) => l.address?.socket_address?.port_value === call.port,
  ) as any;
  if (!listener) return { error: 'no-listener' };
  const chains: any[] = listener.filter_chains ?? [];
  const matching = chains.filter((c) => chainMatches(c.filter_chain_match ?? {}, call));
  // Envoy picks the most specific server name first: exact, then the longest wildcard, then none.
  const ranked = rankBySni(matching, call.sni);
  if (ranked.length === 0) return { listener, error: 'no-filter-chain' };
  if (ranked.length > 1) return { listener, error: 'multiple-filter-chains' };
  return { listener, chain: ranked[0] };
}

/** The filters a call goes through: the chain's network filters and, behind an HCM, its HTTP filters (configs by name). */
export interface ChainFilters {
  readonly network: readonly string[];
  readonly http: readonly string[];
  /** Decoded typed_config of each filter, network then HTTP, in order. */
  readonly configs: readonly { name: string; config: any }[];
}

export function chainFilters(result: PipelineResult, call: Call, node: TestNode = INGRESS_NODE): ChainFilters {
  const picked = pickChain(served(result, node).resources, call);
  if (!picked.chain) throw new Error(`no filter chain for ${JSON.stringify(call)}: ${picked.error}`);
  const filters: any[] = picked.chain.filters ?? [];
  const hcm = filters.find((f) => f.name === 'envoy.filters.network.http_connection_manager');
  const http: any[] = hcm?.typed_config?.http_filters ?? [];
  return {
    network: filters.map((f) => f.name),
    http: http.map((f) => f.name),
    configs: [...filters, ...http].map((f) => ({ name: f.name, config: f.typed_config })),
  };
}

export function simulate(result: PipelineResult, call: Call, node: TestNode = INGRESS_NODE): SimResult {
  const { resources } = served(result, node);
  const picked = pickChain(resources, call);
  if (!picked.listener) return { error: 'no-listener' };
  const out: Record<string, unknown> = { listener: picked.listener.name };
  if (!picked.chain) return { ...out, error: picked.error };
  const chain = picked.chain;
  if (chain.transport_socket) out.tls = chain.transport_socket.typed_config;
  const filter = chain.filters[chain.filters.length - 1];
  const cfg = filter.typed_config;
  if (filter.name === 'envoy.filters.network.tcp_proxy') return { ...out, ...tcpTarget(cfg) };
  const routeName: string = cfg.rds.route_config_name;
  out.routeConfig = routeName;
  const rc: any = resources.routes.get(routeName);
  if (!rc) return { ...out, error: 'no-virtual-host' };
  const vh = pickVirtualHost(rc.virtual_hosts ?? [], call.host ?? '');
  if (!vh) return { ...out, error: 'no-virtual-host' };
  out.virtualHost = vh.name;
  if (vh.require_tls === 'ALL' && !call.sni) return { ...out, error: 'tls-redirect' };
  const route = (vh.routes ?? []).find((r: any) => pathMatches(r.match ?? {}, call.path ?? '/'));
  if (!route) return { ...out, error: 'no-route' };
  return { ...out, ...tcpTarget(route.route ?? {}) };
}

function tcpTarget(cfg: any): Partial<SimResult> {
  if (cfg.cluster) return { cluster: cfg.cluster };
  const clusters = cfg.weighted_clusters?.clusters ?? [];
  return { cluster: clusters[0]?.name, weighted: clusters.map((c: any) => ({ name: c.name, weight: c.weight })) };
}

function chainMatches(m: any, call: Call): boolean {
  if (m.server_names?.length) {
    if (!call.sni) return false;
    if (!m.server_names.some((n: string) => sniMatches(n, call.sni as string))) return false;
  }
  if (m.application_protocols?.length && !m.application_protocols.some((p: string) => call.alpn?.includes(p)))
    return false;
  if (m.transport_protocol === 'tls' && !call.sni) return false;
  return true;
}

const sniMatches = (pattern: string, sni: string): boolean =>
  pattern.startsWith('*.') ? sni.endsWith(pattern.slice(1)) : pattern === sni;

function rankBySni(chains: any[], sni: string | undefined): any[] {
  if (!sni) return chains;
  const score = (c: any): number => {
    const names: string[] = c.filter_chain_match?.server_names ?? [];
    if (names.includes(sni)) return 1000;
    const wild = names.filter((n) => sniMatches(n, sni)).map((n) => n.length);
    return wild.length ? Math.max(...wild) : 0;
  };
  const best = Math.max(...chains.map(score), 0);
  return chains.filter((c) => score(c) === best);
}

function pickVirtualHost(vhosts: any[], host: string): any {
  const h = host.toLowerCase();
  const exact = vhosts.find((v) => v.domains.includes(h));
  if (exact) return exact;
  let best: any;
  let bestLen = -1;
  for (const v of vhosts)
    for (const d of v.domains as string[])
      if (d.startsWith('*') && d !== '*' && h.endsWith(d.slice(1)) && d.length > bestLen) {
        best = v;
        bestLen = d.length;
      }
  return best ?? vhosts.find((v) => v.domains.includes('*'));
}

function pathMatches(m: any, path: string): boolean {
  if (m.path !== undefined) return path === m.path;
  if (m.prefix !== undefined) return path.startsWith(m.prefix);
  if (m.safe_regex !== undefined) return new RegExp(`^(?:${m.safe_regex.regex})$`).test(path);
  if (m.path_separated_prefix !== undefined)
    return path === m.path_separated_prefix || path.startsWith(`${m.path_separated_prefix}/`);
  return false;
}

/** An east-west gateway pod on `nodeName` (10.0.9.1, `istio: ingressgateway`) and its AUTO_PASSTHROUGH Gateway on 15443 for `hosts`. */
export function eastWestGatewayYaml(nodeName: string, hosts: string): string {
  return `---
apiVersion: v1
kind: Pod
metadata: { name: gw-0, namespace: istio-system, labels: { istio: ingressgateway } }
spec: { nodeName: ${nodeName} }
status: { podIP: 10.0.9.1, conditions: [{ type: Ready, status: "True" }] }
---
apiVersion: networking.istio.io/v1
kind: Gateway
metadata: { name: eastwest, namespace: istio-system }
spec:
  selector: { istio: ingressgateway }
  servers:
  - { port: { number: 15443, name: tls, protocol: TLS }, hosts: ['${hosts}'], tls: { mode: AUTO_PASSTHROUGH } }
`;
}

/** The node of the east-west gateway pod of eastWestGatewayYaml, as its proxy announces itself there. */
export const eastWestGatewayNode = (nodeName: string) => ({
  id: 'router~10.0.9.1~gw-0.istio-system~istio-system.svc.cluster.local',
  metadata: { NAMESPACE: 'istio-system', LABELS: { istio: 'ingressgateway' }, NODE_NAME: nodeName },
});

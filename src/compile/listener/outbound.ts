/**
 * Outbound listeners shared by every sidecar (istiod: buildSidecarOutboundListeners plus
 * buildVirtualOutboundListener):
 *
 * - `virtualOutbound` (0.0.0.0:15001, MeshConfig `proxyListenPort`) receives all captured traffic and
 *   hands each connection to the listener of its original destination; what matches none goes to the
 *   egress cluster.
 * - `0.0.0.0_<port>` for every port an HTTP service uses: one HCM whose routes come over RDS (`"<port>"`).
 * - `<clusterIP>_<port>` for every TCP-like service port: a tcp_proxy. Envoy's original-dst lookup
 *   prefers an exact IP listener over the wildcard one, so TCP and HTTP services can share a port.
 *   ServiceEntry addresses listen the same way; a CIDR, or an entry without address, shares
 *   `0.0.0.0_<port>` (matched by destination range or SNI), and headless services get one listener
 *   per pod IP (see `portBinds`). Services on one address:port merge their chains as istiod does.
 *
 * Left out: ExternalName services (aliases: their clients resolve to the target's IP) and UDP ports
 * (sidecars do not proxy UDP).
 */
import type { ProxyHeaders } from './proxy-headers.js';
import { outboundHcmHeaders } from './hcm-headers.js';
import type { CompileContext } from '../context.js';
import { ipListenerName, routeConfigName, VIRTUAL_OUTBOUND, virtualOutboundPort, BLACKHOLE_CLUSTER } from '../names.js';
import { isHttpProtocol, type MeshService, type MeshServicePort } from '../../model/service-model.js';
import { envoy, type Listener } from '../../xds/proto.js';
import { bool, PLAINTEXT_HTTP_ALPNS, RAW_BUFFER_TRANSPORT, SNIFFED_HTTP_ALPNS, socketAddress, u32 } from './filters.js';
import { maskedCidr } from './cidr.js';
import { buildSidecarHcm, hcmFilter } from './http-connection-manager.js';
import { assembleOutboundListener, egressCluster, type OutboundChain } from './outbound-listener.js';
import { outboundTcpChains, type TcpBind } from './outbound-tcp.js';
import { tcpProxyTo } from './tcp-proxy.js';
import { sortedByName } from '../sorted.js';
import { UNIX_BIND_PREFIX } from '../../model/sidecar.js';
import { isIp } from '../../model/workload-endpoints.js';
import { sniffedOn, sniffedRouteName, type SniffedOn } from '../sniffing.js';
import { dfpHttpFilter, isDynamicDns } from '../dynamic-forward-proxy.js';

export const WILDCARD = '0.0.0.0';

export function buildOutboundListeners(ctx: CompileContext): Map<string, Listener> {
  const entries = new Map<string, ListenerEntry>();
  addCatchAllPorts(ctx, entries, ctx.model.services);
  return assembleOutboundListeners(ctx, entries);
}

/** virtualOutbound and the entries' listeners, by name. */
export function assembleOutboundListeners(
  ctx: CompileContext,
  entries: ReadonlyMap<string, ListenerEntry>,
): Map<string, Listener> {
  const listeners = new Map<string, Listener>();
  listeners.set(VIRTUAL_OUTBOUND, virtualOutboundListener(ctx));
  for (const [name, e] of entries)
    listeners.set(name, assembleOutboundListener(ctx, name, e.address, e.port, e.chains, e.bindToPort));
  return sortedByName(listeners);
}

/**
 * The listeners of every port of `services` (istiod's catch-all egress listener). With a `bind`,
 * every port listens there; entries already present are locked (a Sidecar listener with a port
 * took them): the catch-all adds nothing to them.
 */
export function addCatchAllPorts(
  ctx: CompileContext,
  entries: Map<string, ListenerEntry>,
  services: readonly MeshService[],
  bind?: { readonly address: string; readonly bindToPort: boolean },
): void {
  const locked = new Set(entries.keys());
  const httpPorts = new Set<number>();
  // Ports sniffed on the wildcard and used by no HTTP service: their HTTP chain takes HTTP/1.1 only.
  const sniffedOnly = new Set<number>();
  const tcpPorts: { service: MeshService; port: MeshServicePort; sniffed: SniffedOn }[] = [];
  for (const service of services) {
    if (service.externalName !== undefined) continue;
    for (const port of service.ports) {
      if (port.protocol === 'UDP') continue;
      if (isHttpProtocol(port.protocol)) httpPorts.add(port.port);
      else {
        const sniffed = sniffedOn(ctx.model, service, port);
        tcpPorts.push({ service, port, sniffed });
        if (!bind && sniffed.wildcard) sniffedOnly.add(port.port);
      }
    }
  }
  for (const port of httpPorts) sniffedOnly.delete(port);
  const address = bind?.address ?? WILDCARD;
  for (const port of [...httpPorts, ...sniffedOnly].sort((a, b) => a - b)) {
    const name = ipListenerName(address, port);
    if (locked.has(name)) continue;
    const dfpHosts = dynamicDnsHosts(services, port);
    const chain = httpChain(address, port, outboundHcmHeaders(ctx), {
      ...(sniffedOnly.has(port) ? { alpns: SNIFFED_HTTP_ALPNS } : {}),
      ...(dfpHosts.length ? { dfpHosts } : {}),
    });
    entries.set(name, { address, port, chains: [chain], ...boundTo(bind) });
  }
  for (const { service, port, sniffed } of tcpPorts) {
    const binds = bind ? [{ address: bind.address }] : portBinds(ctx, service, port);
    // A Sidecar's bind is shared by every service on the port: as in istiod, the first service's HTTP
    // chain (and so its `<host>:<port>` route config) is the one kept there.
    const http = bind ? port.protocolDefaulted === true && !bind.address.startsWith(UNIX_BIND_PREFIX) : sniffed.own;
    addTcpPort(ctx, entries, service, port, binds, locked, bind?.bindToPort, http);
  }
}

/**
 * The wildcard `DYNAMIC_DNS` hosts with an HTTP port `port`: the HCM of the port's listener gets
 * their dynamic forward proxy filters (istiod's buildHTTPConnectionManager for a sidecar outbound
 * policySvc). istiod adds the filter of the service that built the port's listener only, so a
 * DYNAMIC_DNS host sharing an HTTP port with an older service gets none there (its requests find
 * no host); meshsnap adds one per such host, before the router, in host order.
 */
export function dynamicDnsHosts(services: readonly MeshService[], port: number): string[] {
  const hosts = new Set<string>();
  for (const s of services)
    if (isDynamicDns(s) && s.ports.some((p) => p.port === port && isHttpProtocol(p.protocol))) hosts.add(s.hostname);
  return [...hosts].sort();
}

const boundTo = (bind: { readonly bindToPort: boolean } | undefined) => (bind?.bindToPort ? { bindToPort: true } : {});

/** The chains one outbound listener (address:port) collects from the services on it. */
export interface ListenerEntry {
  readonly address: string;
  readonly port: number;
  readonly chains: OutboundChain[];
  /** A socket of its own (Sidecar captureMode NONE), not a target of virtualOutbound's hand-off. */
  readonly bindToPort?: boolean;
}

/** Where a TCP-like service port listens (istiod's buildSidecarOutboundListener binds). */
export interface PortBind extends TcpBind {
  readonly address: string;
}

/**
 * - A cluster IP, or each IP of a ServiceEntry: `<ip>_<port>`; a CIDR: `0.0.0.0_<port>` with the
 *   CIDR as destination match.
 * - Headless Services and `NONE` entries without an address: one listener per endpoint IP (istiod's
 *   per-pod listeners; a `NONE` entry without endpoints and without selector: the wildcard).
 * - Other entries without an address: `0.0.0.0_<port>`, TLS told apart by SNI.
 */
export function portBinds(ctx: CompileContext, service: MeshService, port: MeshServicePort): PortBind[] {
  const se = service.serviceEntry;
  if (service.clusterIP !== undefined) return [{ address: service.clusterIP }];
  if (se && se.addresses.length > 0)
    return se.addresses.map((a) => (a.includes('/') ? { address: WILDCARD, cidr: a } : { address: a }));
  if (se && se.resolution !== 'NONE') return [{ address: WILDCARD, sni: true }];
  const ips = endpointIps(ctx, service, port);
  if (se && ips.length === 0 && !se.workloadSelector) return [{ address: WILDCARD, sni: true }];
  return ips.map((address) => ({ address, sni: true }));
}

/** Distinct IP addresses of a port's endpoints (DNS names cannot be listened on). */
function endpointIps(ctx: CompileContext, service: MeshService, port: MeshServicePort): string[] {
  const out = new Set<string>();
  for (const ep of ctx.model.endpoints.get(service.hostname)?.get(port.port) ?? [])
    if (isIp(ep.address)) out.add(ep.address);
  return [...out].sort();
}

/**
 * Adds a TCP-like service port's chains to its listeners (not to locked ones); `sniffed`: a port
 * naming no protocol, which also gets an HTTP chain on its own addresses (../sniffing.ts).
 */
export function addTcpPort(
  ctx: CompileContext,
  entries: Map<string, ListenerEntry>,
  service: MeshService,
  port: MeshServicePort,
  binds: readonly PortBind[],
  locked?: ReadonlySet<string>,
  bindToPort?: boolean,
  sniffed = false,
): void {
  for (const bind of binds) {
    const name = ipListenerName(bind.address, port.port);
    if (locked?.has(name)) continue;
    let chains = outboundTcpChains(ctx, service, port, bind);
    if (sniffed && bind.address !== WILDCARD)
      chains = [
        ...chains,
        httpChain(bind.address, port.port, outboundHcmHeaders(ctx), {
          rds: sniffedRouteName(service, port.port),
          sniffed: true,
          alpns: SNIFFED_HTTP_ALPNS,
        }),
      ];
    const entry = entries.get(name);
    if (!entry) {
      entries.set(name, { address: bind.address, port: port.port, chains, ...(bindToPort ? { bindToPort } : {}) });
      continue;
    }
    // istiod's mergeTCPFilterChains: a chain whose match an earlier service's chain already has is dropped.
    const keys = new Set(entry.chains.map(chainMatchKey));
    let dropped = false;
    for (const c of chains) {
      const key = chainMatchKey(c);
      if (keys.has(key)) dropped = true;
      else {
        keys.add(key);
        entry.chains.push(c);
      }
    }
    if (dropped) reportConflict(ctx, service, port, name);
  }
}

/** What a filter chain matches on (istiod's filterChainOpts.conflictsWith): equal keys cannot both be in a listener. */
function chainMatchKey(c: OutboundChain): string {
  const sni = (c.serverNames ?? []).filter((n) => n !== '*');
  const cidrs = (c.prefixRanges ?? []).filter((p) => p !== '0.0.0.0' && !p.startsWith('0.0.0.0/')).map(maskedCidr);
  return JSON.stringify([c.transportProtocol ?? '', c.applicationProtocols ?? [], [...sni].sort(), [...cidrs].sort()]);
}

function reportConflict(ctx: CompileContext, service: MeshService, port: MeshServicePort, name: string): void {
  const se = service.serviceEntry;
  ctx.diags.add({
    severity: 'warning',
    code: 'listener-conflict',
    message: `listener ${name} already exists for another service; this port is skipped`,
    kind: se ? 'ServiceEntry' : 'Service',
    namespace: service.namespace,
    name: se ? se.entryName : service.name,
    field: `spec.ports[${service.ports.indexOf(port)}]`,
    file: service.origin.file,
    index: service.origin.index,
  });
}

function virtualOutboundListener(ctx: CompileContext): Listener {
  // MeshConfig proxyListenPort (istiod's buildVirtualOutboundListener and blackholeFilterChain).
  const port = virtualOutboundPort(ctx.mesh);
  return {
    name: VIRTUAL_OUTBOUND,
    address: socketAddress(WILDCARD, port),
    use_original_dst: bool(true),
    traffic_direction: envoy.config.core.v3.TrafficDirection.OUTBOUND,
    filter_chains: [
      // Connections addressed to the listener's own port would loop back into it forever.
      {
        name: 'virtualOutbound-blackhole',
        filter_chain_match: { destination_port: u32(port) },
        filters: [tcpProxyTo(BLACKHOLE_CLUSTER)],
      },
      { name: 'virtualOutbound-catchall-tcp', filters: [tcpProxyTo(egressCluster(ctx))] },
    ],
  };
}

/**
 * One chain per HTTP port, whatever the number of HTTP services on it: the route config tells them
 * apart by Host. On the wildcard address the HTTP inspector sends plaintext HTTP to the HCM;
 * anything else (TLS, other TCP) falls through to the passthrough chain (or a wildcard TCP
 * service's chain), so unknown destinations on this port still work. On another address (a
 * Sidecar's `bind`, a unix socket), or for a Sidecar HTTP_PROXY port (`sniffed: false`), the HCM
 * takes every connection, as istiod builds it. `rds` names the route config (default `"<port>"`);
 * `alpns`: what the inspector must have found (a sniffed port's chain: ../sniffing.ts).
 */
export function httpChain(
  address: string,
  port: number,
  headers: ProxyHeaders,
  {
    rds = routeConfigName(port),
    sniffed = address === WILDCARD,
    alpns = PLAINTEXT_HTTP_ALPNS,
    dfpHosts = [],
  }: { rds?: string; sniffed?: boolean; alpns?: readonly string[]; dfpHosts?: readonly string[] } = {},
): OutboundChain {
  const hcm = buildSidecarHcm({ statPrefix: `outbound_${ipListenerName(address, port)}`, rds, headers });
  // The dynamic forward proxy filters go just before the router (istiod's buildHTTPConnectionManager).
  const filters = hcm.http_filters ?? [];
  if (dfpHosts.length)
    hcm.http_filters = [...filters.slice(0, -1), ...dfpHosts.map(dfpHttpFilter), ...filters.slice(-1)];
  if (!sniffed) return { filters: [hcmFilter(hcm)], rds };
  return {
    filters: [hcmFilter(hcm)],
    rds,
    transportProtocol: RAW_BUFFER_TRANSPORT,
    applicationProtocols: alpns,
  };
}

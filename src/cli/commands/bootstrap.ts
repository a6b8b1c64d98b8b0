/**
 * `meshsnap bootstrap --node ID [--relay host:port] [--namespace NS] [--labels k=v,...]`
 *
 * `--type router` (or a `router~…` node id): a gateway, which gets the Envoy bootstrap only.
 *
 * Prints two JSON lines: an Envoy bootstrap (`{"envoy": {...}}`: ADS over gRPC to the relay
 * cluster `xds-grpc`, node id and Istio-style metadata) and a bootstrap for proxyless gRPC
 * (`{"grpc": {...}}`: what GRPC_XDS_BOOTSTRAP / GRPC_XDS_BOOTSTRAP_CONFIG take). The node
 * metadata (NAMESPACE, LABELS, and GENERATOR=grpc for proxyless) is what the relay uses to place
 * the proxy in its class (README "Node ids and proxy classes").
 */
import { parseProxyNode } from '../../proxy-class/node-id.js';
import { parseCommand, UsageError } from '../args.js';
import { envoyXdsTransportSocket, grpcXdsServerCreds, type BootstrapTls } from '../bootstrap-tls.js';
import { printJson } from '../output.js';
import { bootstrapSpec } from '../specs/bootstrap.js';

export function parseLabels(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (text === undefined || text === '') return out;
  for (const pair of text.split(',')) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--labels: expected k=v, got ${JSON.stringify(pair)}`);
    out[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim();
  }
  return out;
}

export function splitHostPort(relay: string): { host: string; port: number } {
  const m = /^(\[[^\]]+\]|[^:]+):([0-9]{1,5})$/.exec(relay);
  const port = m ? Number(m[2]) : NaN;
  if (!m || port < 1 || port > 65535) throw new UsageError(`--relay: expected host:port, got ${JSON.stringify(relay)}`);
  return { host: (m[1] as string).replace(/^\[|\]$/g, ''), port };
}

export interface BootstrapInput {
  readonly node: string;
  readonly relay: string;
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
  /** `--locality`: the node's region, zone and subzone (empty when not given). */
  readonly locality?: { readonly region: string; readonly zone: string; readonly subZone: string };
  /** How to reach a TLS relay; undefined: plaintext (`--insecure`). */
  readonly tls?: BootstrapTls;
}

export function envoyBootstrap(b: BootstrapInput): Record<string, unknown> {
  const { host, port } = splitHostPort(b.relay);
  return {
    node: {
      id: b.node,
      cluster: b.labels.app ?? b.node,
      metadata: { NAMESPACE: b.namespace, LABELS: b.labels },
      locality: b.locality?.region
        ? {
            region: b.locality.region,
            ...(b.locality.zone ? { zone: b.locality.zone } : {}),
            ...(b.locality.subZone ? { sub_zone: b.locality.subZone } : {}),
          }
        : {},
    },
    dynamic_resources: {
      ads_config: {
        api_type: 'GRPC',
        transport_api_version: 'V3',
        grpc_services: [{ envoy_grpc: { cluster_name: 'xds-grpc' } }],
        set_node_on_first_message_only: true,
      },
      cds_config: { ads: {}, resource_api_version: 'V3' },
      lds_config: { ads: {}, resource_api_version: 'V3' },
    },
    static_resources: {
      clusters: [
        {
          name: 'xds-grpc',
          type: 'STRICT_DNS',
          connect_timeout: '1s',
          ...(b.tls ? { transport_socket: envoyXdsTransportSocket(b.tls) } : {}),
          typed_extension_protocol_options: {
            'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': {
              '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions',
              explicit_http_config: { http2_protocol_options: {} },
            },
          },
          load_assignment: {
            cluster_name: 'xds-grpc',
            endpoints: [
              { lb_endpoints: [{ endpoint: { address: { socket_address: { address: host, port_value: port } } } }] },
            ],
          },
        },
      ],
    },
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 15000 } } },
    // As istiod's bootstrap: regexes up to RE2 program size 32768 (Envoy's default is 100), the limit
    // meshsnap validates regexes against (src/inputs/validate/string-match.ts).
    layered_runtime: {
      layers: [
        {
          name: 'global config',
          static_layer: {
            're2.max_program_size.error_level': '32768',
            'overload.global_downstream_max_connections': '2147483647',
          },
        },
        { name: 'admin', admin_layer: {} },
      ],
    },
  };
}

export function grpcBootstrap(b: BootstrapInput): Record<string, unknown> {
  return {
    xds_servers: [
      {
        server_uri: b.relay,
        ...(b.tls ? grpcXdsServerCreds(b.tls) : { channel_creds: [{ type: 'insecure' }] }),
        server_features: ['xds_v3'],
      },
    ],
    node: {
      id: b.node,
      // grpc-js-xds refuses a node without a locality.
      locality: {
        region: b.locality?.region ?? '',
        zone: b.locality?.zone ?? '',
        sub_zone: b.locality?.subZone ?? '',
      },
      metadata: { NAMESPACE: b.namespace, LABELS: b.labels, GENERATOR: 'grpc' },
    },
  };
}

export async function bootstrapCommand(argv: readonly string[]): Promise<number> {
  const { values } = parseCommand(bootstrapSpec, argv);
  const nodeId = values.node as string;
  const labels = parseLabels(values.labels);
  // The relay places a node by this parse (src/snapshot/classify.ts): refuse what it would refuse.
  const parsed = parseProxyNode(nodeId, {
    ...(values.namespace !== undefined ? { NAMESPACE: values.namespace } : {}),
    LABELS: labels,
  });
  if (!parsed.ok) throw new UsageError(`--node: ${parsed.reason}`);
  const type = values.type ?? parsed.node.type;
  if (type !== 'sidecar' && type !== 'router')
    throw new UsageError(`--type: expected sidecar or router, got ${JSON.stringify(type)}`);
  if (type !== parsed.node.type)
    throw new UsageError(`--type ${type}: the node id says ${parsed.node.type} (${type}~<ip>~<pod>.<namespace>~…)`);
  const { host } = splitHostPort(values.relay);
  const input: BootstrapInput = {
    node: nodeId,
    relay: values.relay,
    namespace: parsed.node.namespace,
    labels,
    ...(values.locality !== undefined ? { locality: parseLocality(values.locality) } : {}),
    ...(values.insecure ? {} : { tls: bootstrapTls(values, host) }),
  };
  printJson({ envoy: envoyBootstrap(input) });
  // A gateway is an Envoy in router mode: there is no proxyless gRPC form of it.
  if (type === 'sidecar') printJson({ grpc: grpcBootstrap(input) });
  return 0;
}

/** The TLS flags; `--cert` and `--key` go together. */
function bootstrapTls(
  v: {
    ca: string;
    cert?: string | undefined;
    key?: string | undefined;
    'token-file'?: string | undefined;
    sni?: string | undefined;
  },
  relayHost: string,
): BootstrapTls {
  if ((v.cert === undefined) !== (v.key === undefined)) throw new UsageError('--cert and --key go together');
  return {
    caFile: v.ca,
    ...(v.cert !== undefined && v.key !== undefined ? { certFile: v.cert, keyFile: v.key } : {}),
    ...(v['token-file'] !== undefined ? { tokenFile: v['token-file'] } : {}),
    sni: v.sni ?? relayHost,
  };
}

/** `--locality REGION/ZONE/SUBZONE` (zone and subzone optional): a region is required, as the relay reads it. */
function parseLocality(text: string): { region: string; zone: string; subZone: string } {
  const parts = text.split('/');
  const [region = '', zone = '', subZone = ''] = parts;
  if (parts.length > 3 || region === '' || text.length > 253)
    throw new UsageError(`--locality: expected REGION[/ZONE[/SUBZONE]], got ${JSON.stringify(text.slice(0, 80))}`);
  return { region, zone, subZone };
}

/**
 * The proxy's identity as it introduces itself in xDS requests: the node id
 * `<type>~<ip>~<pod>.<namespace>~<namespace>.svc.<domain>` (Envoy sidecars and the proxyless gRPC
 * bootstrap use the same form) plus node metadata (`NAMESPACE`, `LABELS`, `INSTANCE_IPS`, `GENERATOR`).
 */
export type ProxyType = 'sidecar' | 'router';

export interface ProxyNode {
  readonly type: ProxyType;
  /** Instance IPs: INSTANCE_IPS when given, else the id's IP. */
  readonly ips: readonly string[];
  /** `<pod>.<namespace>` as written in the id. */
  readonly id: string;
  readonly podName: string;
  readonly namespace: string;
  /** `<namespace>.svc.cluster.local`. */
  readonly dnsDomain: string;
  readonly labels: Readonly<Record<string, string>>;
  /** `grpc` for proxyless gRPC clients; Envoy sends none. */
  readonly generator?: string;
  /** The Kubernetes Node it runs on (NODE_NAME metadata). */
  readonly nodeName?: string;
  /** The node's `locality`, when it names a region. */
  readonly locality?: { readonly region: string; readonly zone: string; readonly subZone: string };
}

export type ParsedNode =
  { readonly ok: true; readonly node: ProxyNode } | { readonly ok: false; readonly reason: string };

const PROXY_TYPES: readonly string[] = ['sidecar', 'router'];

/** Parses a node id and its metadata. Never throws: a malformed node gets a reason a person can act on. */
export function parseProxyNode(
  nodeId: string,
  metadata: Readonly<Record<string, unknown>> = {},
  locality?: ProxyNode['locality'],
): ParsedNode {
  const bad = (why: string): ParsedNode => ({
    ok: false,
    reason: `malformed node id ${JSON.stringify(nodeId)}: ${why} (expected <type>~<ip>~<pod>.<namespace>~<namespace>.svc.<domain>)`,
  });
  const parts = nodeId.split('~');
  if (parts.length !== 4) return bad(`${parts.length} '~'-separated parts instead of 4`);
  const [type, ip, id, dnsDomain] = parts as [string, string, string, string];
  if (!PROXY_TYPES.includes(type)) return bad(`unknown proxy type ${JSON.stringify(type)}`);
  if (!id) return bad('empty pod id');

  const dot = id.lastIndexOf('.');
  const podName = dot > 0 ? id.slice(0, dot) : id;
  const idNamespace = dot > 0 ? id.slice(dot + 1) : '';
  const domainNamespace = dnsDomain.split('.')[0] ?? '';
  const metaNamespace = typeof metadata.NAMESPACE === 'string' ? metadata.NAMESPACE : '';
  const namespace = metaNamespace || idNamespace || domainNamespace;
  if (!namespace) return bad('no namespace in the id and no NAMESPACE metadata');

  const instanceIps =
    typeof metadata.INSTANCE_IPS === 'string'
      ? metadata.INSTANCE_IPS.split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : [];
  const ips = instanceIps.length ? instanceIps : ip ? [ip] : [];
  const generator = typeof metadata.GENERATOR === 'string' && metadata.GENERATOR ? metadata.GENERATOR : undefined;
  return {
    ok: true,
    node: {
      type: type as ProxyType,
      ips,
      id,
      podName,
      namespace,
      dnsDomain,
      labels: stringRecord(metadata.LABELS),
      ...(generator ? { generator } : {}),
      ...(typeof metadata.NODE_NAME === 'string' && metadata.NODE_NAME ? { nodeName: metadata.NODE_NAME } : {}),
      ...(locality?.region ? { locality } : {}),
    },
  };
}

/** LABELS as a string map; non-string values are ignored. */
function stringRecord(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return out;
  for (const key of Object.keys(value).sort()) {
    const v = (value as Record<string, unknown>)[key];
    if (typeof v === 'string') out[key] = v;
  }
  return out;
}

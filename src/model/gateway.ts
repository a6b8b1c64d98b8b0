/**
 * Istio `Gateway` (networking.istio.io v1/v1beta1/v1alpha3), shaped as in the Istio API reference.
 * The inputs layer validates raw documents into these types (src/inputs/validate/gateway.ts).
 * Certificates are references only (file paths on the proxy, or a credentialName): never key material.
 */
import type { Origin } from './diagnostics.js';
import type { ObjectMeta } from './k8s.js';

/** Protocols a Gateway server port may name, upper-cased as istiod's protocol.Parse reads them. */
export const GATEWAY_PROTOCOLS = [
  'HTTP',
  'HTTPS',
  'HTTP2',
  'GRPC',
  'GRPC-WEB',
  'HTTP_PROXY',
  'TCP',
  'TLS',
  'MONGO',
  'REDIS',
  'MYSQL',
] as const;
export type GatewayProtocol = (typeof GATEWAY_PROTOCOLS)[number];

export const SERVER_TLS_MODES = [
  'PASSTHROUGH',
  'SIMPLE',
  'MUTUAL',
  'AUTO_PASSTHROUGH',
  'ISTIO_MUTUAL',
  'OPTIONAL_MUTUAL',
] as const;
export type ServerTlsMode = (typeof SERVER_TLS_MODES)[number];

export const TLS_PROTOCOL_VERSIONS = ['TLS_AUTO', 'TLSV1_0', 'TLSV1_1', 'TLSV1_2', 'TLSV1_3'] as const;
export type TlsProtocolVersion = (typeof TLS_PROTOCOL_VERSIONS)[number];

export interface GatewayPort {
  readonly number: number;
  /** Upper case. */
  readonly protocol: GatewayProtocol;
  readonly name: string;
}

export interface ServerTlsSettings {
  readonly httpsRedirect?: boolean;
  /** PASSTHROUGH when not written (the enum's zero value, as istiod reads it). */
  readonly mode: ServerTlsMode;
  /** File paths on the proxy. */
  readonly serverCertificate?: string;
  readonly privateKey?: string;
  readonly caCertificates?: string;
  readonly caCrl?: string;
  /** Several server certificates (e.g. RSA and ECDSA) as file pairs. */
  readonly tlsCertificates?: readonly { readonly serverCertificate: string; readonly privateKey: string }[];
  readonly credentialName?: string;
  /** Several Kubernetes secrets (RSA and ECDSA); the first one's `-cacert` validates clients. */
  readonly credentialNames?: readonly string[];
  /** The secret holding the client CA, in place of `<credentialName>-cacert`. */
  readonly caCertCredentialName?: string;
  readonly insecureSkipVerify?: boolean;
  readonly subjectAltNames?: readonly string[];
  readonly verifyCertificateSpki?: readonly string[];
  readonly verifyCertificateHash?: readonly string[];
  readonly minProtocolVersion?: TlsProtocolVersion;
  readonly maxProtocolVersion?: TlsProtocolVersion;
  readonly cipherSuites?: readonly string[];
  readonly ecdhCurves?: readonly string[];
}

export interface GatewayServer {
  readonly port: GatewayPort;
  readonly bind?: string;
  /** As written: `host`, `ns/host`, `./host`, `*\/host`. */
  readonly hosts: readonly string[];
  readonly tls?: ServerTlsSettings;
  readonly name?: string;
}

export interface GatewaySpec {
  readonly servers: readonly GatewayServer[];
  /** Absent: the gateway applies to every router proxy (istiod's legacy behaviour). */
  readonly selector?: Readonly<Record<string, string>>;
}

export interface Gateway {
  readonly kind: 'Gateway';
  readonly apiVersion: string;
  readonly meta: ObjectMeta;
  readonly origin: Origin;
  readonly spec: GatewaySpec;
}

/** `<namespace>/<name>`, the key istiod binds VirtualServices and servers with. */
export const gatewayKey = (gw: Gateway): string => `${gw.meta.namespace}/${gw.meta.name}`;

export const MESH_GATEWAY = 'mesh';

/**
 * A VirtualService's gateway reference resolved as istiod does (model.resolveGatewayName):
 * `mesh` and `ns/name` stay, `./name` and a short name are taken in the VirtualService's namespace, the
 * legacy `name.ns[.svc.cluster.local]` becomes `ns/name`.
 */
export function resolveGatewayRef(ref: string, vsNamespace: string): string {
  if (ref === MESH_GATEWAY) return ref;
  const slash = ref.indexOf('/');
  if (slash >= 0) return ref.slice(0, slash) === '.' ? `${vsNamespace}/${ref.slice(slash + 1)}` : ref;
  const dot = ref.indexOf('.');
  if (dot < 0) return `${vsNamespace}/${ref}`;
  const rest = ref.slice(dot + 1);
  const end = rest.indexOf('.');
  return `${end < 0 ? rest : rest.slice(0, end)}/${ref.slice(0, dot)}`;
}

/** HTTP-family protocols (istiod's protocol.IsHTTP). */
export const isHttpGatewayProtocol = (p: GatewayProtocol): boolean =>
  p === 'HTTP' || p === 'HTTP2' || p === 'GRPC' || p === 'GRPC-WEB' || p === 'HTTP_PROXY';

export const isTlsGatewayProtocol = (p: GatewayProtocol): boolean => p === 'HTTPS' || p === 'TLS';

export const isPassthroughServer = (s: GatewayServer): boolean =>
  s.tls?.mode === 'PASSTHROUGH' || s.tls?.mode === 'AUTO_PASSTHROUGH';

/** HTTP, or HTTPS terminated here (istiod's gateway.IsHTTPServer). */
export const isHttpServer = (s: GatewayServer): boolean =>
  isHttpGatewayProtocol(s.port.protocol) || (s.port.protocol === 'HTTPS' && !isPassthroughServer(s));

/** A non-HTTP server with TLS settings (istiod's gateway.IsTLSServer: an HTTP server's httpsRedirect does not count). */
export const isTlsServer = (s: GatewayServer): boolean =>
  s.tls !== undefined && !isHttpGatewayProtocol(s.port.protocol);

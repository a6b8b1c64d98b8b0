/**
 * MeshConfig `defaultConfig` (ProxyConfig): the proxy settings every proxy starts with. Most of it
 * is read by istio-agent and the proxy's bootstrap, never by xDS (an `info` each). Two parts are
 * xDS, as istiod reads them (pilot/pkg/networking/util/proxy_headers.go, core/gateway.go
 * buildGatewayConnectionManager and buildGatewayListener): `proxyHeaders` (the Server header,
 * x-request-id, x-envoy-attempt-count, the x-envoy debug headers, XFCC on inbound, x-forwarded-port
 * and -host) and `gatewayTopology` (numTrustedProxies, forwardClientCertDetails, proxyProtocol).
 * Those xDS parts meshsnap does not build are warned about (`unsupported-field`).
 */
import type { ForwardClientCertDetails, MeshGatewayTopology, MeshProxyHeaders } from '../../model/mesh-config.js';
import { bool, compact, fields, get, int, obj, str, type Reader } from './reader.js';

const FCC_MODES: readonly ForwardClientCertDetails[] = [
  'SANITIZE',
  'FORWARD_ONLY',
  'APPEND_FORWARD',
  'SANITIZE_SET',
  'ALWAYS_FORWARD_ONLY',
];

/** ProxyConfig fields istiod turns into xDS that meshsnap does not build, and why. */
const NOT_BUILT: Readonly<Record<string, string>> = {
  tracing: 'meshsnap configures no tracing (nor does it apply Telemetry tracing)',
};

/** A limit on `server.value`, the Server header's value. */
const MAX_SERVER_VALUE = 256;

export interface DefaultConfigParts {
  readonly proxyHeaders?: MeshProxyHeaders;
  readonly gatewayTopology?: MeshGatewayTopology;
}

export function readDefaultConfig(r: Reader, v: unknown, path: string): DefaultConfigParts {
  const o = obj(r, v, path);
  if (!o) return {};
  for (const key of Object.keys(o).sort()) {
    if (key === 'proxyHeaders' || key === 'gatewayTopology') continue;
    const why = NOT_BUILT[key];
    if (why) r.warn(`${path}.${key}`, `is not applied: ${why}`, 'unsupported-field');
    else
      r.info(
        `${path}.${key.slice(0, 80)}`,
        'read by istio-agent and the proxy bootstrap, not by xDS: not used by meshsnap',
        'ignored-field',
      );
  }
  const proxyHeaders = readProxyHeaders(r, get(o, 'proxyHeaders'), `${path}.proxyHeaders`);
  const gatewayTopology = readTopology(r, get(o, 'gatewayTopology'), `${path}.gatewayTopology`);
  return compact({ proxyHeaders: nonEmpty(proxyHeaders), gatewayTopology: nonEmpty(gatewayTopology) });
}

/** Absent when nothing is set: a mesh that sets nothing keeps its digests. */
const nonEmpty = <T extends object>(o: T | undefined): T | undefined => (o && Object.keys(o).length ? o : undefined);

function fccMode(r: Reader, v: unknown, path: string): ForwardClientCertDetails | undefined {
  const s = str(r, v, path);
  if (s === undefined || s === 'UNDEFINED') return undefined;
  if ((FCC_MODES as readonly string[]).includes(s)) return s as ForwardClientCertDetails;
  r.error(path, `must be one of UNDEFINED, ${FCC_MODES.join(', ')}, got "${s.slice(0, 40)}"`);
  return undefined;
}

/** A `{disabled: bool}` (or `{enabled: bool}`) message: whether the flag is set true. */
function flag(r: Reader, v: unknown, path: string, key: 'disabled' | 'enabled'): true | undefined {
  const o = fields(r, v, path, [key]);
  return o && bool(r, get(o, key), `${path}.${key}`) === true ? true : undefined;
}

function readProxyHeaders(r: Reader, v: unknown, path: string): MeshProxyHeaders | undefined {
  const o = fields(r, v, path, [
    'forwardedClientCert',
    'setCurrentClientCertDetails',
    'requestId',
    'server',
    'attemptCount',
    'envoyDebugHeaders',
    'metadataExchangeHeaders',
    'preserveHttp1HeaderCase',
    'xForwardedPort',
    'xForwardedHost',
  ]);
  if (!o) return undefined;
  const at = (k: string): string => `${path}.${k}`;
  const details = fields(r, get(o, 'setCurrentClientCertDetails'), at('setCurrentClientCertDetails'), [
    'subject',
    'cert',
    'chain',
    'dns',
    'uri',
  ]);
  const detail = (k: string) =>
    details ? bool(r, get(details, k), `${at('setCurrentClientCertDetails')}.${k}`) : undefined;
  const setCurrentClientCertDetails = details
    ? compact({
        subject: detail('subject'),
        cert: detail('cert'),
        chain: detail('chain'),
        dns: detail('dns'),
        uri: detail('uri'),
      })
    : undefined;
  const server = fields(r, get(o, 'server'), at('server'), ['disabled', 'value']);
  const serverDisabled: true | undefined =
    server && bool(r, get(server, 'disabled'), at('server.disabled')) === true ? true : undefined;
  const serverValue = server ? str(r, get(server, 'value'), at('server.value')) : undefined;
  if (serverValue !== undefined && (serverValue.length > MAX_SERVER_VALUE || /[\r\n\0]/.test(serverValue)))
    r.error(at('server.value'), `must be a header value of at most ${MAX_SERVER_VALUE} characters`);
  if (get(o, 'metadataExchangeHeaders') !== undefined) {
    const mx = fields(r, get(o, 'metadataExchangeHeaders'), at('metadataExchangeHeaders'), ['mode']);
    const mode = mx ? str(r, get(mx, 'mode'), at('metadataExchangeHeaders.mode')) : undefined;
    if (mode !== undefined && mode !== 'UNDEFINED' && mode !== 'IN_MESH')
      r.error(at('metadataExchangeHeaders.mode'), `must be UNDEFINED or IN_MESH, got "${mode.slice(0, 40)}"`);
    r.info(
      at('metadataExchangeHeaders'),
      "meshsnap serves no Istio metadata exchange filter (it is istio-proxy's, not Envoy's): nothing to change",
      'ignored-field',
    );
  }
  if (bool(r, get(o, 'preserveHttp1HeaderCase'), at('preserveHttp1HeaderCase')) === true)
    r.warn(
      at('preserveHttp1HeaderCase'),
      "is not applied: meshsnap's Envoy API has no preserve_case header formatter; HTTP/1 header names are lower-cased",
      'unsupported-field',
    );
  return compact({
    forwardedClientCert: fccMode(r, get(o, 'forwardedClientCert'), at('forwardedClientCert')),
    setCurrentClientCertDetails,
    requestIdDisabled: flag(r, get(o, 'requestId'), at('requestId'), 'disabled'),
    serverDisabled,
    serverValue: serverDisabled || !serverValue ? undefined : serverValue,
    attemptCountDisabled: flag(r, get(o, 'attemptCount'), at('attemptCount'), 'disabled'),
    envoyDebugHeadersDisabled: flag(r, get(o, 'envoyDebugHeaders'), at('envoyDebugHeaders'), 'disabled'),
    xForwardedPort: flag(r, get(o, 'xForwardedPort'), at('xForwardedPort'), 'enabled'),
    xForwardedHost: flag(r, get(o, 'xForwardedHost'), at('xForwardedHost'), 'enabled'),
  });
}

function readTopology(r: Reader, v: unknown, path: string): MeshGatewayTopology | undefined {
  const o = fields(r, v, path, ['numTrustedProxies', 'forwardClientCertDetails', 'proxyProtocol']);
  if (!o) return undefined;
  const proxyProtocol = get(o, 'proxyProtocol');
  if (proxyProtocol !== undefined && proxyProtocol !== null) fields(r, proxyProtocol, `${path}.proxyProtocol`, []);
  const numTrustedProxies = int(r, get(o, 'numTrustedProxies'), `${path}.numTrustedProxies`);
  return compact({
    numTrustedProxies: numTrustedProxies ? numTrustedProxies : undefined,
    forwardClientCertDetails: fccMode(r, get(o, 'forwardClientCertDetails'), `${path}.forwardClientCertDetails`),
    proxyProtocol: proxyProtocol !== undefined && proxyProtocol !== null ? (true as const) : undefined,
  });
}

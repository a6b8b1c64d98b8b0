/**
 * Sidecar (networking.istio.io v1/v1beta1/v1alpha3) → model/sidecar.ts, with the webhook's checks
 * (istio pkg/config/validation: ValidateSidecar): not empty, ingress ports required and unique,
 * `defaultEndpoint` on loopback/any or a unix socket, no ISTIO_MUTUAL/AUTO_PASSTHROUGH ingress TLS,
 * at most one port-less egress listener and it comes last, egress hosts `namespace/dnsName`,
 * `egressProxy` only with ALLOW_ANY. Istio's warnings (duplicated hosts, `*\/*` with others, an
 * empty selector) are warnings here too. One invalid part invalidates the Sidecar.
 */
import type { Origin } from '../../model/diagnostics.js';
import type {
  Sidecar,
  SidecarEgressListener,
  SidecarIngressListener,
  SidecarIngressTls,
  SidecarOutboundTrafficPolicy,
  SidecarPort,
} from '../../model/sidecar.js';
import { TLS_PROTOCOL_VERSIONS, type TlsProtocolVersion } from '../../model/gateway.js';
import { cipherSuites, pemFree } from './gateway.js';
import { connectionPool } from './connection-pool.js';
import { checkUnixAddress } from './unix-address.js';
import { isDns1123Label, readCreationTimestamp, readMeta } from './meta.js';
import { bool, compact, fields, get, int, list, str, strList, strMap, type Raw, type Reader } from './reader.js';

/** istiod's protocol.Parse names (case-insensitive); anything else is Unsupported. */
const PROTOCOLS = [
  'HTTP',
  'HTTPS',
  'HTTP2',
  'HTTP_PROXY',
  'GRPC',
  'GRPC-WEB',
  'TCP',
  'TLS',
  'MONGO',
  'REDIS',
  'MYSQL',
  'UDP',
];
const TLS_PROTOCOLS = new Set(['HTTPS', 'TLS']);
/** istiod's protocol.IsHTTP. */
const isHttpLike = (p: string | undefined): boolean =>
  p !== undefined && ['HTTP', 'HTTP2', 'HTTP_PROXY', 'GRPC', 'GRPC-WEB'].includes(p);
const INGRESS_TLS_MODES = ['PASSTHROUGH', 'SIMPLE', 'MUTUAL', 'OPTIONAL_MUTUAL'] as const;
const CAPTURE_MODES = ['DEFAULT', 'IPTABLES', 'NONE'];

export function readSidecar(r: Reader, raw: Raw, origin: Origin, apiVersion: string): Sidecar | undefined {
  const meta = readMeta(r, raw, true, 'subdomain');
  const created = readCreationTimestamp(r, raw);
  const spec =
    fields(r, get(raw, 'spec'), 'spec', [
      'workloadSelector',
      'egress',
      'ingress',
      'outboundTrafficPolicy',
      'inboundConnectionPool',
    ]) ?? {};
  const workloadSelector = selector(r, get(spec, 'workloadSelector'));
  const ingress = list(r, get(spec, 'ingress'), 'spec.ingress', (v, p) => ingressListener(r, v, p));
  const egress = list(r, get(spec, 'egress'), 'spec.egress', (v, p) => egressListener(r, v, p, meta?.namespace ?? ''));
  const outboundTrafficPolicy = outboundPolicy(r, get(spec, 'outboundTrafficPolicy'));
  const inboundConnectionPool = connectionPool(r, get(spec, 'inboundConnectionPool'), 'spec.inboundConnectionPool');
  if (!ingress?.length && !egress?.length && !outboundTrafficPolicy && get(spec, 'inboundConnectionPool') === undefined)
    r.error('spec', 'sidecar: empty configuration provided', 'missing-field');
  uniquePorts(r, ingress ?? [], 'spec.ingress');
  checkEgressOrder(r, get(spec, 'egress'), egress ?? []);
  if (!meta || r.failed) return undefined;
  return {
    kind: 'Sidecar',
    apiVersion,
    meta,
    ...(created !== undefined ? { creationTimestamp: created } : {}),
    origin,
    spec: compact({
      workloadSelector,
      egress: egress?.length ? egress : undefined,
      ingress: ingress?.length ? ingress : undefined,
      outboundTrafficPolicy,
      inboundConnectionPool,
    }),
  };
}

function selector(r: Reader, v: unknown): { labels: Record<string, string> } | undefined {
  const o = fields(r, v, 'spec.workloadSelector', ['labels']);
  if (!o) return undefined;
  const labels = strMap(r, get(o, 'labels'), 'spec.workloadSelector.labels') ?? {};
  if (Object.keys(labels).length === 0) {
    r.warn(
      'spec.workloadSelector.labels',
      'sidecar: workload selector specified without labels, will be applied to all services in namespace',
      'empty-selector',
    );
    return undefined;
  }
  return { labels };
}

function sidecarPort(r: Reader, v: unknown, path: string, allowZero: boolean): SidecarPort | undefined {
  const o = fields(r, v, path, ['number', 'protocol', 'name', 'targetPort']);
  if (!o) return undefined;
  const number = int(r, get(o, 'number'), `${path}.number`, allowZero ? 0 : 1, 65535);
  if (get(o, 'targetPort') !== undefined) r.error(`${path}.targetPort`, 'targetPort has no impact on Sidecars');
  const protocol = str(r, get(o, 'protocol'), `${path}.protocol`);
  if (protocol !== undefined && protocol !== '' && !PROTOCOLS.includes(protocol.toUpperCase()))
    r.error(`${path}.protocol`, `unrecognized protocol "${(protocol ?? '').slice(0, 40)}"`);
  const name = str(r, get(o, 'name'), `${path}.name`);
  if (name !== undefined && name !== '' && !isDns1123Label(name))
    r.error(`${path}.name`, `invalid port name "${name.slice(0, 60)}"`);
  if (number === undefined && get(o, 'number') === undefined && !allowZero)
    r.error(`${path}.number`, 'is required', 'missing-field');
  return compact({
    number: number ?? 0,
    protocol: protocol ? protocol.toUpperCase() : undefined,
    name: name || undefined,
  });
}

function ingressListener(r: Reader, v: unknown, path: string): SidecarIngressListener | undefined {
  const o = fields(r, v, path, ['port', 'bind', 'captureMode', 'defaultEndpoint', 'tls', 'connectionPool']);
  if (!o) {
    r.error(path, 'sidecar: ingress may not be null');
    return undefined;
  }
  if (get(o, 'port') === undefined) {
    r.error(`${path}.port`, 'sidecar: port is required for ingress listeners', 'missing-field');
    return undefined;
  }
  const port = sidecarPort(r, get(o, 'port'), `${path}.port`, false);
  const bind = str(r, get(o, 'bind'), `${path}.bind`);
  if (bind) checkIp(r, bind, `${path}.bind`);
  const defaultEndpoint = str(r, get(o, 'defaultEndpoint'), `${path}.defaultEndpoint`);
  if (defaultEndpoint) checkDefaultEndpoint(r, defaultEndpoint, `${path}.defaultEndpoint`);
  const tls = get(o, 'tls') === undefined ? undefined : ingressTls(r, get(o, 'tls'), `${path}.tls`, port?.protocol);
  const pool = connectionPool(r, get(o, 'connectionPool'), `${path}.connectionPool`);
  if (pool?.http && port && !isHttpLike(port.protocol))
    r.warn(
      `${path}.connectionPool.http`,
      `HTTP connection pool settings are configured for port ${port.number} but its protocol is not HTTP (${port.protocol ?? 'unset'}); only TCP settings will apply`,
      'ignored-field',
    );
  if (!port) return undefined;
  return compact({
    port,
    bind: bind || undefined,
    defaultEndpoint: defaultEndpoint || undefined,
    tls,
    connectionPool: pool,
  });
}

function checkDefaultEndpoint(r: Reader, endpoint: string, path: string): void {
  if (endpoint.startsWith('unix://')) {
    if (endpoint.length === 'unix://'.length) r.error(path, 'unix address must not be empty');
    return;
  }
  const m = /^(?:\[([^\]]*)\]|([^:]*)):([^:]*)$/.exec(endpoint);
  if (!m) {
    r.error(path, `address ${endpoint.slice(0, 60)}: missing port in address`);
    return;
  }
  const host = m[1] ?? m[2] ?? '';
  if (host !== '' && !['127.0.0.1', '0.0.0.0', '::1', '::'].includes(host))
    r.error(
      path,
      'sidecar: defaultEndpoint must be of form 127.0.0.1:<port>,0.0.0.0:<port>,[::1]:port,[::]:port,unix://filepath or unset',
    );
  const portText = m[3] ?? '';
  if (!/^\d+$/.test(portText))
    r.error(path, `sidecar: defaultEndpoint port (${portText.slice(0, 20)}) is not a number`);
  else if (Number(portText) < 1 || Number(portText) > 65535)
    r.error(path, `port number ${portText} must be in the range 1..65535`);
}

function ingressTls(r: Reader, v: unknown, path: string, protocol: string | undefined): SidecarIngressTls | undefined {
  const o = fields(r, v, path, [
    'mode',
    'serverCertificate',
    'privateKey',
    'caCertificates',
    'subjectAltNames',
    'httpsRedirect',
    'credentialName',
    'credentialNames',
    'tlsCertificates',
    'minProtocolVersion',
    'maxProtocolVersion',
    'cipherSuites',
    'ecdhCurves',
    'caCrl',
    'insecureSkipVerify',
    'caCertCredentialName',
    'verifyCertificateSpki',
    'verifyCertificateHash',
  ]);
  if (!o) return undefined;
  // istiod reads these from a credential's SDS secret only, and a sidecar's ingress TLS takes files.
  for (const key of ['caCertCredentialName', 'verifyCertificateSpki', 'verifyCertificateHash'])
    if (get(o, key) !== undefined)
      r.warn(
        `${path}.${key}`,
        'is not applied: istiod applies it only with a credentialName, which sidecar ingress TLS does not support',
        'unsupported-field',
      );
  for (const [key, message] of [
    ['subjectAltNames', 'sidecar: subjectAltNames is not supported in ingress tls'],
    ['httpsRedirect', 'sidecar: httpsRedirect is not supported'],
    ['credentialName', 'sidecar: credentialName is not currently supported'],
    ['credentialNames', 'sidecar: credentialNames is not currently supported'],
    ['tlsCertificates', 'sidecar: tls_certificates is not currently supported'],
  ] as const) {
    const value = get(o, key);
    if (value !== undefined && value !== false && value !== '' && !(Array.isArray(value) && value.length === 0))
      r.error(`${path}.${key}`, message);
  }
  const modeText = str(r, get(o, 'mode'), `${path}.mode`) ?? 'PASSTHROUGH';
  const mode = INGRESS_TLS_MODES.find((m) => m === modeText);
  if (modeText === 'ISTIO_MUTUAL' || modeText === 'AUTO_PASSTHROUGH')
    r.error(`${path}.mode`, `configuration is invalid: cannot set mode to ${modeText} in sidecar ingress tls`);
  else if (!mode) r.error(`${path}.mode`, `unknown TLS mode "${modeText.slice(0, 40)}"`);
  if (!TLS_PROTOCOLS.has(protocol ?? '')) r.error(path, 'server cannot have TLS settings for non HTTPS/TLS ports');
  const file = (key: string) => pemFree(r, str(r, get(o, key), `${path}.${key}`), `${path}.${key}`);
  const serverCertificate = file('serverCertificate');
  const privateKey = file('privateKey');
  const caCertificates = file('caCertificates');
  const version = (key: string): TlsProtocolVersion | undefined => {
    const v = str(r, get(o, key), `${path}.${key}`);
    if (v === undefined || v === '') return undefined;
    if ((TLS_PROTOCOL_VERSIONS as readonly string[]).includes(v)) return v as TlsProtocolVersion;
    r.error(`${path}.${key}`, `unknown value "${v.slice(0, 40)}", must be one of ${TLS_PROTOCOL_VERSIONS.join(', ')}`);
    return undefined;
  };
  if (mode === 'SIMPLE' || mode === 'MUTUAL' || mode === 'OPTIONAL_MUTUAL') {
    if (!serverCertificate)
      r.error(`${path}.serverCertificate`, `${mode} TLS requires a server certificate`, 'missing-field');
    if (!privateKey) r.error(`${path}.privateKey`, `${mode} TLS requires a private key`, 'missing-field');
  }
  if ((mode === 'MUTUAL' || mode === 'OPTIONAL_MUTUAL') && !caCertificates)
    r.error(`${path}.caCertificates`, `${mode} TLS requires a CA certificate bundle`, 'missing-field');
  const caCrl = file('caCrl');
  if (caCrl !== undefined && mode === 'SIMPLE') r.error(`${path}.caCrl`, 'CRL is not supported with SIMPLE TLS');
  if (caCrl !== undefined && mode === 'PASSTHROUGH')
    r.warn(`${path}.caCrl`, 'PASSTHROUGH mode does not use certificates, they will be ignored', 'ignored-field');
  return compact({
    mode,
    serverCertificate,
    privateKey,
    caCertificates,
    minProtocolVersion: version('minProtocolVersion'),
    maxProtocolVersion: version('maxProtocolVersion'),
    cipherSuites: cipherSuites(r, strList(r, get(o, 'cipherSuites'), `${path}.cipherSuites`), `${path}.cipherSuites`),
    ecdhCurves: strList(r, get(o, 'ecdhCurves'), `${path}.ecdhCurves`),
    caCrl: mode === 'PASSTHROUGH' ? undefined : caCrl,
    insecureSkipVerify: bool(r, get(o, 'insecureSkipVerify'), `${path}.insecureSkipVerify`),
  });
}

function egressListener(r: Reader, v: unknown, path: string, namespace: string): SidecarEgressListener | undefined {
  const o = fields(r, v, path, ['port', 'bind', 'captureMode', 'hosts']);
  if (!o) {
    r.error(path, 'egress listener may not be null');
    return undefined;
  }
  const port = get(o, 'port') === undefined ? undefined : sidecarPort(r, get(o, 'port'), `${path}.port`, true);
  const bind = str(r, get(o, 'bind'), `${path}.bind`);
  const captureMode = str(r, get(o, 'captureMode'), `${path}.captureMode`);
  if (captureMode !== undefined && !CAPTURE_MODES.includes(captureMode))
    r.error(`${path}.captureMode`, `unknown capture mode "${captureMode.slice(0, 40)}"`);
  if (port && port.number === 0) {
    if (!bind?.startsWith('unix://'))
      r.error(`${path}.bind`, 'sidecar: ports with 0 value must have a unix domain socket bind address');
    else checkUnixAddress(r, bind.slice('unix://'.length), `${path}.bind`);
    if (captureMode !== undefined && captureMode !== 'DEFAULT' && captureMode !== 'NONE')
      r.error(`${path}.captureMode`, 'sidecar: captureMode must be DEFAULT/NONE for unix domain socket listeners');
  } else if (bind) checkIp(r, bind, `${path}.bind`);
  const hosts = strList(r, get(o, 'hosts'), `${path}.hosts`) ?? [];
  if (hosts.length === 0)
    r.error(`${path}.hosts`, 'sidecar: egress listener must contain at least one host', 'missing-field');
  checkEgressHosts(r, hosts, `${path}.hosts`, namespace);
  return compact({ port, bind: bind || undefined, captureMode, hosts });
}

/** ValidateNamespaceSlashWildcardHostname (sidecar form) and ValidateSidecar's duplicate warnings. */
function checkEgressHosts(r: Reader, hosts: readonly string[], path: string, namespace: string): void {
  const byNamespace = new Map<string, Set<string>>();
  hosts.forEach((h, i) => {
    const at = `${path}[${i}]`;
    const slash = h.indexOf('/');
    if (slash < 0) {
      r.error(at, 'host must be of form namespace/dnsName');
      return;
    }
    const nsPart = h.slice(0, slash);
    const dnsName = h.slice(slash + 1);
    if (nsPart === '' || dnsName === '') r.error(at, 'config namespace and dnsName in host entry cannot be empty');
    const ns = nsPart.startsWith('~') ? nsPart.slice(1) : nsPart;
    if (ns !== '' && ns !== '*' && ns !== '.' && !isDns1123Label(ns))
      r.error(at, `invalid namespace value "${nsPart.slice(0, 60)}" in sidecar`);
    if (dnsName !== '' && dnsName !== '*') {
      if (!dnsName.includes('.')) r.error(at, `"${dnsName.slice(0, 60)}": short names (non FQDN) are not allowed`);
      else if (!validWildcardDomain(dnsName))
        r.error(
          at,
          `"${dnsName.slice(0, 60)}" is not a valid (wildcard) domain name; partial wildcards are not allowed`,
        );
    }
    if (nsPart.startsWith('~')) return;
    const key = ns === '.' ? namespace : ns;
    const seen = byNamespace.get(key) ?? new Set<string>();
    byNamespace.set(key, seen);
    if (dnsName !== '*' ? seen.has(dnsName) || seen.has('*') : seen.size > 0)
      r.warn(at, `duplicated egress host: ${h.slice(0, 80)}`, 'duplicate-host');
    seen.add(dnsName);
  });
  if (byNamespace.get('*')?.has('*') && byNamespace.size !== 1)
    r.warn(path, '`*/*` host select all resources, no other hosts can be added', 'duplicate-host');
}

function validWildcardDomain(name: string): boolean {
  const labels = (name.startsWith('*.') ? name.slice(2) : name).split('.');
  return name.length <= 255 && labels.every((l) => /^[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?$/.test(l));
}

function checkEgressOrder(r: Reader, raw: unknown, egress: readonly SidecarEgressListener[]): void {
  if (!Array.isArray(raw) || egress.length !== raw.length) return;
  const portless = egress.map((e, i) => (e.port === undefined ? i : -1)).filter((i) => i >= 0);
  if (portless.length > 1)
    r.error(`spec.egress[${portless[1]}]`, 'sidecar: egress can have only one listener with empty port');
  else if (portless.length === 1 && portless[0] !== egress.length - 1)
    r.error(
      `spec.egress[${portless[0]}]`,
      'sidecar: the egress listener with empty port should be the last listener in the list',
    );
  uniquePorts(
    r,
    egress.filter((e) => e.port !== undefined && e.port.number !== 0) as { port: SidecarPort }[],
    'spec.egress',
  );
  const sockets = egress.filter((e) => e.port?.number === 0).map((e) => e.bind);
  if (new Set(sockets).size !== sockets.length)
    r.error('spec.egress', 'sidecar: unix domain socket values for listeners must be unique');
}

function uniquePorts(r: Reader, listeners: readonly { readonly port?: SidecarPort }[], path: string): void {
  const seen = new Set<number>();
  for (const l of listeners) {
    if (!l.port) continue;
    if (seen.has(l.port.number)) r.error(path, 'sidecar: ports on IP bound listeners must be unique');
    seen.add(l.port.number);
  }
}

function outboundPolicy(r: Reader, v: unknown): SidecarOutboundTrafficPolicy | undefined {
  const path = 'spec.outboundTrafficPolicy';
  const o = fields(r, v, path, ['mode', 'egressProxy']);
  if (!o) return undefined;
  const modeText = str(r, get(o, 'mode'), `${path}.mode`) ?? 'REGISTRY_ONLY';
  if (modeText === 'ALLOW_ANY_DYNAMIC_DNS') {
    r.error(
      `${path}.mode`,
      'sidecar: ALLOW_ANY_DYNAMIC_DNS mode is only supported in MeshConfig, not in Sidecar resource',
    );
    return undefined;
  }
  if (modeText !== 'ALLOW_ANY' && modeText !== 'REGISTRY_ONLY') {
    r.error(`${path}.mode`, `must be ALLOW_ANY or REGISTRY_ONLY, got "${modeText.slice(0, 40)}"`);
    return undefined;
  }
  const proxyRaw = get(o, 'egressProxy');
  if (proxyRaw === undefined) return { mode: modeText };
  if (modeText !== 'ALLOW_ANY') {
    r.error(
      `${path}.egressProxy`,
      'sidecar: egress_proxy must be set only with ALLOW_ANY outbound_traffic_policy mode',
    );
    return undefined;
  }
  const p = fields(r, proxyRaw, `${path}.egressProxy`, ['host', 'subset', 'port']) ?? {};
  const host = str(r, get(p, 'host'), `${path}.egressProxy.host`) ?? '';
  if (!host.includes('.') || !validWildcardDomain(host) || host.startsWith('*'))
    r.error(`${path}.egressProxy.host`, `"${host.slice(0, 60)}" is not a fully qualified domain name`);
  const subset = str(r, get(p, 'subset'), `${path}.egressProxy.subset`);
  const portRaw = get(p, 'port');
  if (portRaw === undefined) {
    r.error(`${path}.egressProxy.port`, 'sidecar: egress_proxy port must be non-nil', 'missing-field');
    return undefined;
  }
  const portObj = fields(r, portRaw, `${path}.egressProxy.port`, ['number']) ?? {};
  const number = int(r, get(portObj, 'number'), `${path}.egressProxy.port.number`, 1, 65535);
  return { mode: modeText, egressProxy: compact({ host, subset, port: number }) };
}

function checkIp(r: Reader, value: string, path: string): void {
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(value);
  const ok = v4 ? v4.slice(1).every((p) => Number(p) <= 255) : /^[0-9a-fA-F:]+$/.test(value) && value.includes(':');
  if (!ok) r.error(path, `${value.slice(0, 60)} is not a valid IP`);
}

/**
 * Gateway (networking.istio.io) → model/gateway.ts, with istiod's validation
 * (pkg/config/validation ValidateGateway, validateServer, validateServerPort, validateTLSOptions).
 *
 * As for VirtualServices, any error makes the whole object invalid: istiod's webhook rejects it.
 * What istiod only warns about (httpsRedirect on a non-HTTP server, invalid or duplicate cipher
 * suites, certificates on a passthrough server) is a warning; invalid and duplicate cipher suites
 * are then left out, as istiod filters them before building the TLS context.
 */
import type { Origin } from '../../model/diagnostics.js';
import {
  GATEWAY_PROTOCOLS,
  isHttpGatewayProtocol,
  isTlsGatewayProtocol,
  SERVER_TLS_MODES,
  TLS_PROTOCOL_VERSIONS,
  type Gateway,
  type GatewayPort,
  type GatewayProtocol,
  type GatewayServer,
  type ServerTlsMode,
  type ServerTlsSettings,
  type TlsProtocolVersion,
} from '../../model/gateway.js';
import { isDns1123Label, readMeta } from './meta.js';
import {
  bool,
  compact,
  fields,
  get,
  int,
  list,
  requiredStr,
  str,
  strList,
  strMap,
  type Raw,
  type Reader,
} from './reader.js';
import { checkUnixAddress, UNIX_ADDRESS_PREFIX } from './unix-address.js';

/** Cipher suites a gateway may name (istiod's security.ValidCipherSuites, from BoringSSL). */
const VALID_CIPHER_SUITES = new Set([
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
  'ECDHE-ECDSA-AES128-SHA',
  'ECDHE-RSA-AES128-SHA',
  'ECDHE-ECDSA-AES256-SHA',
  'ECDHE-RSA-AES256-SHA',
  'AES128-GCM-SHA256',
  'AES256-GCM-SHA384',
  'AES128-SHA',
  'AES256-SHA',
  'DES-CBC3-SHA',
]);

/** istiod accepts `ALL` and operator expressions (`-X`, `+X`, `!X`) unchecked. */
export const isValidCipherSuite = (cs: string): boolean =>
  cs === 'ALL' || !/^[A-Za-z0-9]/.test(cs) || VALID_CIPHER_SUITES.has(cs);

export function readGateway(r: Reader, raw: Raw, origin: Origin, apiVersion: string): Gateway | undefined {
  // istiod: "Gateway name must conform to the DNS label format (no dots)".
  const meta = readMeta(r, raw, true, 'label');
  const spec = fields(r, get(raw, 'spec'), 'spec', ['servers', 'selector']);
  if (!spec) {
    r.error('spec', 'is required', 'missing-field');
    return undefined;
  }
  const selector = strMap(r, get(spec, 'selector'), 'spec.selector');
  const servers = list(r, get(spec, 'servers'), 'spec.servers', (v, p) => server(r, v, p));
  if (!servers?.length && !r.failed)
    r.error('spec.servers', 'a gateway must have at least one server', 'missing-field');
  const portNames = new Set<string>();
  (servers ?? []).forEach((s, i) => {
    if (portNames.has(s.port.name))
      r.error(
        `spec.servers[${i}].port.name`,
        `port names in servers must be unique: duplicate name "${s.port.name.slice(0, 60)}"`,
      );
    portNames.add(s.port.name);
    if (s.tls?.httpsRedirect && !isHttpGatewayProtocol(s.port.protocol))
      r.warn(
        `spec.servers[${i}].tls.httpsRedirect`,
        'httpsRedirect should only be used with HTTP servers',
        'ineffective-field',
      );
  });
  if (!meta || r.failed || !servers) return undefined;
  return {
    kind: 'Gateway',
    apiVersion,
    meta,
    origin,
    spec: compact({ servers, selector }),
  };
}

function server(r: Reader, v: unknown, path: string): GatewayServer | undefined {
  const o = fields(r, v, path, ['port', 'bind', 'hosts', 'tls', 'name', 'defaultEndpoint']);
  if (!o) return undefined;
  const before = r.errorCount;
  const hosts = strList(r, get(o, 'hosts'), `${path}.hosts`);
  if (!hosts?.length) {
    if (r.errorCount === before)
      r.error(`${path}.hosts`, 'server config must contain at least one host', 'missing-field');
  } else hosts.forEach((h, i) => serverHost(r, h, `${path}.hosts[${i}]`));
  const bind = str(r, get(o, 'bind'), `${path}.bind`);
  const unix = bind?.startsWith(UNIX_ADDRESS_PREFIX) === true;
  const p = serverPort(r, get(o, 'port'), `${path}.port`, unix);
  // istiod's validateServerBind: a unix socket, on port 0; else an IP address.
  if (bind !== undefined && bind !== '') {
    if (unix) {
      checkUnixAddress(r, bind.slice(UNIX_ADDRESS_PREFIX.length), `${path}.bind`);
      if (p && p.number !== 0) r.error(`${path}.port.number`, 'port number must be 0 for unix domain socket');
    } else if (!isIpAddress(bind)) r.error(`${path}.bind`, `"${bind.slice(0, 60)}" is not a valid IP address`);
  }
  if (get(o, 'defaultEndpoint') !== undefined)
    r.warn(
      `${path}.defaultEndpoint`,
      'defaultEndpoint applies to sidecar ingress only and is ignored on gateways',
      'ignored-field',
    );
  const tls = tlsOptions(r, get(o, 'tls'), `${path}.tls`);
  const name = str(r, get(o, 'name'), `${path}.name`);
  if (!p || r.errorCount !== before) return undefined;
  if (isTlsGatewayProtocol(p.protocol) && !tls) {
    r.error(`${path}.tls`, 'a server must have TLS settings for HTTPS/TLS protocols', 'missing-field');
    return undefined;
  }
  if (!isTlsGatewayProtocol(p.protocol) && tls) {
    // Only httpsRedirect is allowed on a plain HTTP server.
    const onlyRedirect =
      isHttpGatewayProtocol(p.protocol) &&
      tls.mode === 'PASSTHROUGH' &&
      !tls.serverCertificate &&
      !tls.privateKey &&
      !tls.caCertificates;
    if (!onlyRedirect) {
      r.error(
        `${path}.tls`,
        isHttpGatewayProtocol(p.protocol)
          ? 'a server cannot have TLS settings for plain text HTTP ports (only httpsRedirect)'
          : 'a server cannot have TLS settings for non HTTPS/TLS ports',
      );
      return undefined;
    }
  }
  return compact({ port: p, bind: bind || undefined, hosts: hosts ?? [], tls, name: name || undefined });
}

/** istiod's validateServerPort: port 0 only with a unix socket bind. */
function serverPort(r: Reader, v: unknown, path: string, unixBind: boolean): GatewayPort | undefined {
  const o = fields(r, v, path, ['number', 'protocol', 'name', 'targetPort']);
  if (!o) {
    if (v === undefined || v === null) r.error(path, 'port is required', 'missing-field');
    return undefined;
  }
  const before = r.errorCount;
  const number = int(r, get(o, 'number'), `${path}.number`, unixBind ? 0 : 1, 65535);
  if (number === undefined && r.errorCount === before) r.error(`${path}.number`, 'is required', 'missing-field');
  const rawProtocol = requiredStr(r, get(o, 'protocol'), `${path}.protocol`);
  const protocol = rawProtocol?.toUpperCase();
  if (protocol !== undefined && !(GATEWAY_PROTOCOLS as readonly string[]).includes(protocol))
    r.error(
      `${path}.protocol`,
      `invalid protocol "${rawProtocol?.slice(0, 40)}", supported protocols are ${GATEWAY_PROTOCOLS.join(', ')}`,
    );
  const name = str(r, get(o, 'name'), `${path}.name`);
  if (!name) r.error(`${path}.name`, 'port name must be set', 'missing-field');
  if (get(o, 'targetPort') !== undefined) r.error(`${path}.targetPort`, 'targetPort has no impact on Gateways');
  if (r.errorCount !== before || number === undefined || !name) return undefined;
  return { number, protocol: protocol as GatewayProtocol, name };
}

/** `host`, `ns/host`, `./host`, `*\/host` (istiod's ValidateNamespaceSlashWildcardHostname for gateways). */
function serverHost(r: Reader, host: string, path: string): void {
  const slash = host.indexOf('/');
  let dnsName = host;
  if (slash >= 0) {
    const ns = host.slice(0, slash);
    dnsName = host.slice(slash + 1);
    if (ns === '' || dnsName === '') {
      r.error(path, 'config namespace and dnsName in host entry cannot be empty');
      return;
    }
    if (ns !== '*' && ns !== '.' && !isDns1123Label(ns)) {
      r.error(path, `invalid namespace value "${ns.slice(0, 60)}" in gateway`);
      return;
    }
  }
  if (dnsName === '*') return;
  if (!dnsName.includes('.')) {
    r.error(path, `"${dnsName.slice(0, 60)}": short names (non FQDN) are not allowed`);
    return;
  }
  if (isIpAddress(dnsName)) return;
  const labels = (dnsName.startsWith('*.') ? dnsName.slice(2) : dnsName).split('.');
  if (dnsName.length > 255 || !labels.every((l) => /^[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?$/.test(l)))
    r.error(path, `"${dnsName.slice(0, 60)}" is not a valid (wildcard) domain name; partial wildcards are not allowed`);
}

function tlsOptions(r: Reader, v: unknown, path: string): ServerTlsSettings | undefined {
  const o = fields(r, v, path, [
    'httpsRedirect',
    'mode',
    'serverCertificate',
    'privateKey',
    'caCertificates',
    'caCrl',
    'tlsCertificates',
    'credentialName',
    'credentialNames',
    'caCertCredentialName',
    'insecureSkipVerify',
    'subjectAltNames',
    'verifyCertificateSpki',
    'verifyCertificateHash',
    'minProtocolVersion',
    'maxProtocolVersion',
    'cipherSuites',
    'ecdhCurves',
  ]);
  if (!o) return undefined;
  const before = r.errorCount;
  const s = (key: string): string | undefined => {
    const x = str(r, get(o, key), `${path}.${key}`);
    return x === '' ? undefined : x;
  };
  const filePath = (key: string): string | undefined => pemFree(r, s(key), `${path}.${key}`);
  const oneOf = <T extends string>(key: string, allowed: readonly T[]): T | undefined => {
    const x = s(key);
    if (x === undefined) return undefined;
    if ((allowed as readonly string[]).includes(x)) return x as T;
    r.error(`${path}.${key}`, `unknown value "${x.slice(0, 40)}", must be one of ${allowed.join(', ')}`);
    return undefined;
  };
  const httpsRedirect = bool(r, get(o, 'httpsRedirect'), `${path}.httpsRedirect`);
  const rawMode = oneOf<ServerTlsMode>('mode', SERVER_TLS_MODES);
  const out = compact({
    httpsRedirect: httpsRedirect || undefined,
    // The enum's zero value, as istiod reads an absent mode.
    mode: rawMode ?? 'PASSTHROUGH',
    serverCertificate: filePath('serverCertificate'),
    privateKey: filePath('privateKey'),
    caCertificates: filePath('caCertificates'),
    caCrl: filePath('caCrl'),
    tlsCertificates: list(r, get(o, 'tlsCertificates'), `${path}.tlsCertificates`, (v, p) => {
      const c = fields(r, v, p, ['serverCertificate', 'privateKey', 'caCertificates']);
      if (!c) return undefined;
      // istiod's ApplyToCommonTLSContext gives every certificate the server's caCertificates.
      if (str(r, get(c, 'caCertificates'), `${p}.caCertificates`))
        r.warn(
          `${p}.caCertificates`,
          "a certificate's own caCertificates is not applied (istiod neither): clients are validated with the server's caCertificates",
          'unsupported-field',
        );
      const cert = pemFree(r, str(r, get(c, 'serverCertificate'), `${p}.serverCertificate`), `${p}.serverCertificate`);
      const key = pemFree(r, str(r, get(c, 'privateKey'), `${p}.privateKey`), `${p}.privateKey`);
      if (!cert) r.error(`${p}.serverCertificate`, 'a server certificate is required', 'missing-field');
      if (!key) r.error(`${p}.privateKey`, 'a private key is required', 'missing-field');
      return cert && key ? { serverCertificate: cert, privateKey: key } : undefined;
    }),
    credentialName: s('credentialName'),
    credentialNames: strList(r, get(o, 'credentialNames'), `${path}.credentialNames`),
    caCertCredentialName: s('caCertCredentialName'),
    insecureSkipVerify: bool(r, get(o, 'insecureSkipVerify'), `${path}.insecureSkipVerify`),
    subjectAltNames: strList(r, get(o, 'subjectAltNames'), `${path}.subjectAltNames`),
    verifyCertificateSpki: strList(r, get(o, 'verifyCertificateSpki'), `${path}.verifyCertificateSpki`),
    verifyCertificateHash: strList(r, get(o, 'verifyCertificateHash'), `${path}.verifyCertificateHash`),
    minProtocolVersion: oneOf<TlsProtocolVersion>('minProtocolVersion', TLS_PROTOCOL_VERSIONS),
    maxProtocolVersion: oneOf<TlsProtocolVersion>('maxProtocolVersion', TLS_PROTOCOL_VERSIONS),
    cipherSuites: cipherSuites(r, strList(r, get(o, 'cipherSuites'), `${path}.cipherSuites`), `${path}.cipherSuites`),
    ecdhCurves: strList(r, get(o, 'ecdhCurves'), `${path}.ecdhCurves`),
  });
  if (r.errorCount !== before) return undefined;
  checkTlsMode(r, out, path);
  return out;
}

/** A file on the proxy; key or certificate material pasted inline is refused and never quoted back. */
export function pemFree(r: Reader, value: string | undefined, path: string): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (/-----BEGIN|[\r\n]/.test(value)) {
    r.error(path, 'must be a file path on the proxy; inline key or certificate material (PEM) is not accepted');
    return undefined;
  }
  return value;
}

export function cipherSuites(r: Reader, suites: string[] | undefined, path: string): string[] | undefined {
  if (!suites) return undefined;
  const kept: string[] = [];
  const invalid = new Set<string>();
  const duplicate = new Set<string>();
  for (const cs of suites) {
    if (!isValidCipherSuite(cs)) invalid.add(cs);
    else if (kept.includes(cs)) duplicate.add(cs);
    else kept.push(cs);
  }
  if (invalid.size)
    r.warn(
      path,
      `ignoring invalid cipher suites: ${[...invalid].sort().join(', ').slice(0, 200)}`,
      'invalid-cipher-suite',
    );
  if (duplicate.size)
    r.warn(
      path,
      `ignoring duplicate cipher suites: ${[...duplicate].sort().join(', ').slice(0, 200)}`,
      'invalid-cipher-suite',
    );
  return kept.length ? kept : undefined;
}

/** The per-mode rules of istiod's validateTLSOptions. */
function checkTlsMode(r: Reader, tls: ServerTlsSettings, path: string): void {
  const mode = tls.mode;
  if ((tls.minProtocolVersion === 'TLSV1_0' || tls.minProtocolVersion === 'TLSV1_1') && !tls.cipherSuites?.length)
    r.warn(
      `${path}.minProtocolVersion`,
      'TLS versions below TLSV1_2 require setting compatible ciphers, as the defaults no longer include them',
      'tls-version',
    );
  const credentialNames = tls.credentialNames?.length ? tls.credentialNames : undefined;
  const tlsCertificates = tls.tlsCertificates?.length ? tls.tlsCertificates : undefined;
  if (mode === 'ISTIO_MUTUAL') {
    for (const key of ['serverCertificate', 'privateKey', 'caCertificates', 'credentialName'] as const)
      if (tls[key] !== undefined) r.error(`${path}.${key}`, `ISTIO_MUTUAL TLS cannot have an associated ${key}`);
    if (tlsCertificates) r.error(`${path}.tlsCertificates`, 'ISTIO_MUTUAL TLS cannot have associated tlsCertificates');
    if (credentialNames) r.error(`${path}.credentialNames`, 'ISTIO_MUTUAL TLS cannot have associated credentialNames');
    return;
  }
  if (mode === 'PASSTHROUGH' || mode === 'AUTO_PASSTHROUGH') {
    const certs = [tls.serverCertificate, tls.privateKey, tls.caCertificates, tls.caCrl, tls.credentialName];
    if (certs.some((c) => c !== undefined) || credentialNames || tlsCertificates)
      r.warn(path, `${mode} mode does not use certificates, they will be ignored`, 'ignored-field');
    return;
  }
  const sources = [
    tls.serverCertificate !== undefined && tls.privateKey !== undefined,
    tls.credentialName !== undefined,
    credentialNames !== undefined,
    tlsCertificates !== undefined,
  ].filter(Boolean).length;
  if (sources > 1)
    r.error(
      path,
      'only one of credentialName, credentialNames, serverCertificate/privateKey, tlsCertificates should be specified',
    );
  // With a credential the certificates are fetched over SDS: no file is required.
  if (tls.credentialName !== undefined || credentialNames) return;
  const prefix = mode === 'SIMPLE' ? 'SIMPLE TLS' : 'MUTUAL TLS';
  if (mode !== 'SIMPLE' && tls.caCertificates === undefined)
    r.error(`${path}.caCertificates`, `${prefix} requires a client CA bundle`, 'missing-field');
  if ((tlsCertificates?.length ?? 0) > 2)
    r.warn(`${path}.tlsCertificates`, `${prefix} can support up to 2 server certificates`, 'ignored-field');
  if (!tlsCertificates) {
    if (tls.serverCertificate === undefined)
      r.error(`${path}.serverCertificate`, `${prefix} requires a server certificate`, 'missing-field');
    if (tls.privateKey === undefined)
      r.error(`${path}.privateKey`, `${prefix} requires a private key`, 'missing-field');
  }
  if (tls.caCrl !== undefined && mode === 'SIMPLE') r.error(`${path}.caCrl`, 'CRL is not supported with SIMPLE TLS');
}

function isIpAddress(s: string): boolean {
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (v4) return v4.slice(1).every((p) => Number(p) <= 255);
  return /^[0-9a-fA-F:]+$/.test(s) && s.includes(':') && (s.match(/::/g)?.length ?? 0) <= 1;
}

/**
 * Mesh config, from either
 *  - `kind: MeshConfig` (apiVersion meshsnap.dev/v1alpha1), fields of model/mesh-config.ts under
 *    `spec` (or at the top level); or
 *  - Istio's own `ConfigMap istio` in istio-system, whose `data.mesh` is MeshConfig YAML. Only the
 *    fields meshsnap uses are read (of `defaultConfig`, the proxy headers, gateway topology and
 *    connection settings: proxy-config.ts), anything else gets an `info`.
 * Missing fields take DEFAULT_MESH_CONFIG's values.
 */
import {
  DEFAULT_DNS_REFRESH_RATE_MS,
  DEFAULT_MESH_CONFIG,
  DEFAULT_PROXY_INBOUND_LISTEN_PORT,
  DEFAULT_PROXY_LISTEN_PORT,
  DEFAULT_TRUST_DOMAIN,
  type JsonValue,
  type MeshAccessLog,
  type MeshAccessLogFormat,
  type MeshConfig,
  type MeshDefaultTrafficPolicy,
} from '../../model/mesh-config.js';
import { parseDocuments } from '../parse.js';
import { duration } from './duration.js';
import { isDns1123Label } from './meta.js';
import { readExtensionProviders } from './extension-providers.js';
import { ReadTracker } from '../read-tracker.js';
import { bool, compact, fields, get, list, num, obj, port, Reader, str, strList, type Raw } from './reader.js';
import { connectionPool, tcpKeepalive } from './connection-pool.js';
import { locality, outlier, zoneAware } from './destination-rule.js';
import { checkExportTo } from './export-to.js';
import { httpRetry } from './virtual-service.js';
import { MESH_INGRESS_FIELDS, readMeshIngress } from './ingress.js';
import { readDefaultConfig } from './proxy-config.js';
import { MESH_TLS_FIELDS, readMeshTls } from './mesh-tls.js';

const MESH_FIELDS = [
  'domainSuffix',
  'outboundTrafficPolicy',
  'enableAutoMtls',
  'enableTracing',
  'connectTimeout',
  'connectTimeoutMs',
  'rootNamespace',
  'trustDomain',
  'trustDomainAliases',
  'caCertificates',
  'extensionProviders',
  'dnsRefreshRate',
  'defaultServiceExportTo',
  'defaultVirtualServiceExportTo',
  'defaultDestinationRuleExportTo',
  'defaultHttpRetryPolicy',
  'accessLogFile',
  'accessLogEncoding',
  'accessLogFormat',
  'defaultProviders',
  'protocolDetectionTimeout',
  'h2UpgradePolicy',
  'tcpKeepalive',
  'defaultTrafficPolicy',
  'localityLbSetting',
  'zoneAwareLbSetting',
  'defaultConfig',
  'pathNormalization',
  'inboundTrafficPolicy',
  'proxyListenPort',
  'proxyInboundListenPort',
  ...MESH_INGRESS_FIELDS,
  ...MESH_TLS_FIELDS,
];

export function readMeshConfigObject(r: Reader, raw: Raw): MeshConfig | undefined {
  const hasSpec = get(raw, 'spec') !== undefined;
  const body = hasSpec
    ? fields(r, get(raw, 'spec'), 'spec', MESH_FIELDS)
    : fields(r, raw, '', ['apiVersion', 'kind', 'metadata', ...MESH_FIELDS]);
  if (!body) return undefined;
  const mesh = readMeshFields(r, body, hasSpec ? 'spec' : '');
  return r.failed ? undefined : mesh;
}

/** Is this document Istio's mesh ConfigMap? */
export function isIstioMeshConfigMap(raw: Raw): boolean {
  const m = get(raw, 'metadata');
  if (m === null || typeof m !== 'object') return false;
  const meta = m as Raw;
  return get(meta, 'name') === 'istio' && get(meta, 'namespace') === 'istio-system';
}

export function readMeshConfigMap(r: Reader, raw: Raw): MeshConfig | undefined {
  const data = obj(r, get(raw, 'data'), 'data');
  const text = data ? str(r, get(data, 'mesh'), 'data.mesh') : undefined;
  if (text === undefined) {
    if (!r.failed) r.error('data.mesh', 'the istio ConfigMap needs a `mesh` entry', 'missing-field');
    return undefined;
  }
  const mesh = readMeshFields(r, meshBody(r, text), 'data.mesh');
  return r.failed ? undefined : mesh;
}

/** The fields of a mesh ConfigMap's `data.mesh` text meshsnap reads (the others are told). */
function meshBody(r: Reader, text: string): Record<string, unknown> {
  const parsed = parseDocuments(text, r.id.file ?? '');
  for (const d of parsed.diagnostics) r.error('data.mesh', d.message, 'parse-error');
  const doc = parsed.docs[0]?.object ?? {};
  if (parsed.docs.length > 1) r.error('data.mesh', 'must hold one YAML document');
  const body: Record<string, unknown> = {};
  for (const key of Object.keys(doc).sort()) {
    if (MESH_FIELDS.includes(key) && key !== 'connectTimeoutMs' && key !== 'domainSuffix') body[key] = doc[key];
    else r.info(`data.mesh.${key}`, `mesh field "${key}" is not used by meshsnap`, 'ignored-field');
  }
  return body;
}

/**
 * What is stored of a valid mesh ConfigMap's `data.mesh`: the members `readMeshConfigMap` reads of
 * it, as JSON (a YAML document), not the text, which may hold what the compiler never reads (a
 * tracer's access token, a header from istiod's environment). Reading the stored text again reads
 * the same members: the projection of a projection is itself.
 */
export function meshTextForStorage(text: string): string {
  const r = new Reader({ file: '', index: 0 }, []);
  const tracker = new ReadTracker(meshBody(r, text));
  readMeshFields(r, tracker.tracked() as Raw, 'data.mesh');
  return JSON.stringify(tracker.projection());
}

function readMeshFields(r: Reader, o: Raw, path: string): MeshConfig {
  const at = (k: string): string => (path === '' ? k : `${path}.${k}`);
  const domainSuffix = str(r, get(o, 'domainSuffix'), at('domainSuffix'));
  if (domainSuffix !== undefined && !/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(domainSuffix))
    r.error(at('domainSuffix'), `"${domainSuffix.slice(0, 60)}" is not a DNS suffix`);
  const rootNamespace = str(r, get(o, 'rootNamespace'), at('rootNamespace'));
  if (rootNamespace !== undefined && !isDns1123Label(rootNamespace))
    r.error(at('rootNamespace'), `"${rootNamespace.slice(0, 60)}" is not a namespace name`);
  const connectTimeoutMs =
    num(r, get(o, 'connectTimeoutMs'), at('connectTimeoutMs'), 0) ??
    duration(r, get(o, 'connectTimeout'), at('connectTimeout'));
  const trustDomain = str(r, get(o, 'trustDomain'), at('trustDomain'));
  const trustDomainAliases = strList(r, get(o, 'trustDomainAliases'), at('trustDomainAliases'));
  const caTrustDomains = readCaTrustDomains(r, get(o, 'caCertificates'), at('caCertificates'));
  const extensionProviders = readExtensionProviders(r, get(o, 'extensionProviders'), at('extensionProviders'));
  const dnsRefreshRateMs = duration(r, get(o, 'dnsRefreshRate'), at('dnsRefreshRate'));
  if (dnsRefreshRateMs === 0) r.error(at('dnsRefreshRate'), 'dnsRefreshRate must be greater than zero');
  const defaultHttpRetryPolicy = httpRetry(r, get(o, 'defaultHttpRetryPolicy'), at('defaultHttpRetryPolicy'));
  const { accessLog, formatting: accessLogFormatting } = readAccessLog(r, o, at);
  const { accessLogging: defaultAccessLogProviders, tracing: defaultTracingProviders } = readDefaultProviders(
    r,
    get(o, 'defaultProviders'),
    at('defaultProviders'),
  );
  const protocolDetectionTimeoutMs = duration(r, get(o, 'protocolDetectionTimeout'), at('protocolDetectionTimeout'));
  // istiod's ValidateProtocolDetectionTimeout: 0 disables the timeout; otherwise whole milliseconds.
  if (protocolDetectionTimeoutMs !== undefined && !Number.isInteger(protocolDetectionTimeoutMs))
    r.error(at('protocolDetectionTimeout'), 'only durations to ms precision are supported');
  const h2Upgrade = h2UpgradePolicy(r, get(o, 'h2UpgradePolicy'), at('h2UpgradePolicy'));
  const keepalive = tcpKeepalive(r, get(o, 'tcpKeepalive'), at('tcpKeepalive'));
  const defaultTrafficPolicy = readDefaultTrafficPolicy(r, get(o, 'defaultTrafficPolicy'), at('defaultTrafficPolicy'));
  const localityLbSetting = locality(r, get(o, 'localityLbSetting'), at('localityLbSetting'));
  const zoneAwareLbSetting = zoneAware(r, get(o, 'zoneAwareLbSetting'), at('zoneAwareLbSetting'));
  const { proxyHeaders, gatewayTopology, connectionSettings, tracing } = readDefaultConfig(
    r,
    get(o, 'defaultConfig'),
    at('defaultConfig'),
  );
  const pathNormalization = readPathNormalization(r, get(o, 'pathNormalization'), at('pathNormalization'));
  const inboundLocalhost = readInboundTrafficPolicy(r, get(o, 'inboundTrafficPolicy'), at('inboundTrafficPolicy'));
  // istiod's ValidateMeshConfig checks proxyListenPort (ValidatePort); the inbound one is a port too.
  const proxyListenPort = port(r, get(o, 'proxyListenPort'), at('proxyListenPort'));
  const proxyInboundListenPort = port(r, get(o, 'proxyInboundListenPort'), at('proxyInboundListenPort'));
  if (
    (proxyListenPort !== undefined || proxyInboundListenPort !== undefined) &&
    (proxyListenPort ?? DEFAULT_PROXY_LISTEN_PORT) === (proxyInboundListenPort ?? DEFAULT_PROXY_INBOUND_LISTEN_PORT)
  )
    r.error(
      at('proxyListenPort'),
      'must differ from proxyInboundListenPort: Envoy refuses two listeners on one address and port',
    );
  const exportDefaults = (
    key: 'defaultServiceExportTo' | 'defaultVirtualServiceExportTo' | 'defaultDestinationRuleExportTo',
  ) => {
    const value = strList(r, get(o, key), at(key));
    checkExportTo(r, value, at(key), '', { allowNone: true });
    return value?.length ? { [key]: value } : {};
  };
  return {
    domainSuffix: domainSuffix ?? DEFAULT_MESH_CONFIG.domainSuffix,
    outboundTrafficPolicy:
      outboundPolicy(r, get(o, 'outboundTrafficPolicy'), at('outboundTrafficPolicy')) ??
      DEFAULT_MESH_CONFIG.outboundTrafficPolicy,
    enableAutoMtls: bool(r, get(o, 'enableAutoMtls'), at('enableAutoMtls')) ?? DEFAULT_MESH_CONFIG.enableAutoMtls,
    connectTimeoutMs: connectTimeoutMs ?? DEFAULT_MESH_CONFIG.connectTimeoutMs,
    rootNamespace: rootNamespace ?? DEFAULT_MESH_CONFIG.rootNamespace,
    // Absent unless set (or equal to the default), so meshes without them keep their digests.
    ...(trustDomain !== undefined && trustDomain !== '' && trustDomain !== DEFAULT_TRUST_DOMAIN ? { trustDomain } : {}),
    ...(trustDomainAliases?.length ? { trustDomainAliases } : {}),
    ...(caTrustDomains.length ? { caTrustDomains } : {}),
    ...(extensionProviders?.length ? { extensionProviders } : {}),
    ...(dnsRefreshRateMs !== undefined && dnsRefreshRateMs !== DEFAULT_DNS_REFRESH_RATE_MS ? { dnsRefreshRateMs } : {}),
    ...exportDefaults('defaultServiceExportTo'),
    ...exportDefaults('defaultVirtualServiceExportTo'),
    ...exportDefaults('defaultDestinationRuleExportTo'),
    ...(defaultHttpRetryPolicy ? { defaultHttpRetryPolicy } : {}),
    ...(accessLog ? { accessLog } : {}),
    ...(accessLogFormatting ? { accessLogFormatting } : {}),
    ...(defaultAccessLogProviders?.length ? { defaultAccessLogProviders } : {}),
    ...(defaultTracingProviders?.length ? { defaultTracingProviders } : {}),
    ...(protocolDetectionTimeoutMs ? { protocolDetectionTimeoutMs } : {}),
    ...(h2Upgrade ? { h2Upgrade } : {}),
    ...(keepalive ? { tcpKeepalive: keepalive } : {}),
    ...(defaultTrafficPolicy ? { defaultTrafficPolicy } : {}),
    ...(localityLbSetting ? { localityLbSetting } : {}),
    ...(zoneAwareLbSetting ? { zoneAwareLbSetting } : {}),
    ...readMeshTls(r, o, at),
    ...readMeshIngress(r, o, at),
    ...(proxyHeaders ? { proxyHeaders } : {}),
    ...(gatewayTopology ? { gatewayTopology } : {}),
    ...(connectionSettings ? { connectionSettings } : {}),
    ...(bool(r, get(o, 'enableTracing'), at('enableTracing')) === false ? { tracingDisabled: true as const } : {}),
    ...(tracing ? { tracing } : {}),
    ...(pathNormalization ? { pathNormalization } : {}),
    ...(inboundLocalhost ? { inboundTrafficPolicy: 'LOCALHOST' as const } : {}),
    ...(proxyListenPort !== undefined && proxyListenPort !== DEFAULT_PROXY_LISTEN_PORT ? { proxyListenPort } : {}),
    ...(proxyInboundListenPort !== undefined && proxyInboundListenPort !== DEFAULT_PROXY_INBOUND_LISTEN_PORT
      ? { proxyInboundListenPort }
      : {}),
  };
}

/**
 * MeshConfig.ProxyPathNormalization: `normalization` one of DEFAULT, NONE, BASE, MERGE_SLASHES,
 * DECODE_AND_MERGE_SLASHES (istiod fails to read a mesh config with another); DEFAULT and BASE are
 * istiod's default and left out.
 */
function readPathNormalization(r: Reader, v: unknown, path: string): MeshConfig['pathNormalization'] {
  const o = fields(r, v, path, ['normalization']);
  const s = o ? str(r, get(o, 'normalization'), `${path}.normalization`) : undefined;
  if (s === undefined || s === 'DEFAULT' || s === 'BASE') return undefined;
  if (s === 'NONE' || s === 'MERGE_SLASHES' || s === 'DECODE_AND_MERGE_SLASHES') return s;
  r.error(
    `${path}.normalization`,
    `must be one of DEFAULT, NONE, BASE, MERGE_SLASHES, DECODE_AND_MERGE_SLASHES, got "${s.slice(0, 40)}"`,
  );
  return undefined;
}

/** MeshConfig.InboundTrafficPolicy: `mode` PASSTHROUGH (istiod's default) or LOCALHOST; true for LOCALHOST. */
function readInboundTrafficPolicy(r: Reader, v: unknown, path: string): boolean {
  const o = fields(r, v, path, ['mode']);
  const mode = o ? str(r, get(o, 'mode'), `${path}.mode`) : undefined;
  if (mode === undefined || mode === 'PASSTHROUGH') return false;
  if (mode === 'LOCALHOST') return true;
  r.error(`${path}.mode`, `must be PASSTHROUGH or LOCALHOST, got "${mode.slice(0, 40)}"`);
  return false;
}

/** MeshConfig.H2UpgradePolicy: DO_NOT_UPGRADE (the default) or UPGRADE. */
function h2UpgradePolicy(r: Reader, v: unknown, path: string): true | undefined {
  const s = str(r, v, path);
  if (s === undefined || s === 'DO_NOT_UPGRADE') return undefined;
  if (s === 'UPGRADE') return true;
  r.error(path, `must be DO_NOT_UPGRADE or UPGRADE, got "${s.slice(0, 40)}"`);
  return undefined;
}

/** istiod's validateMeshConfigDefaultTrafficPolicy: a DestinationRule's connectionPool and outlierDetection. */
function readDefaultTrafficPolicy(r: Reader, v: unknown, path: string): MeshDefaultTrafficPolicy | undefined {
  const o = fields(r, v, path, ['connectionPool', 'outlierDetection']);
  if (!o) return undefined;
  const policy = compact({
    connectionPool: connectionPool(r, get(o, 'connectionPool'), `${path}.connectionPool`),
    outlierDetection: outlier(r, get(o, 'outlierDetection'), `${path}.outlierDetection`),
  });
  return policy.connectionPool || policy.outlierDetection ? policy : undefined;
}

/** Bounds on `accessLogFormat`: its length, and the nesting of a JSON format. */
export const MAX_ACCESS_LOG_FORMAT_CHARS = 16_384;
export const MAX_ACCESS_LOG_JSON_DEPTH = 16;

/**
 * `accessLogFile`, `accessLogEncoding` (TEXT | JSON), `accessLogFormat`. Without a file there is no
 * mesh-wide access log (istiod), but the built-in `envoy` Telemetry provider formats its lines with
 * the other two (FileAccessLogFromMeshConfig): kept as `formatting`. A JSON format that is not a
 * JSON object makes istiod log an error and use its default JSON format: a warning here, and the
 * default too.
 */
function readAccessLog(
  r: Reader,
  o: Raw,
  at: (k: string) => string,
): { accessLog?: MeshAccessLog; formatting?: MeshAccessLogFormat } {
  const path = str(r, get(o, 'accessLogFile'), at('accessLogFile'));
  if (path !== undefined && path.length > 4096) r.error(at('accessLogFile'), 'is longer than 4096 characters');
  const rawEncoding = get(o, 'accessLogEncoding');
  const encodingText = str(r, rawEncoding, at('accessLogEncoding'));
  if (encodingText !== undefined && encodingText !== 'TEXT' && encodingText !== 'JSON')
    r.error(at('accessLogEncoding'), `must be TEXT or JSON, got "${encodingText.slice(0, 40)}"`);
  const encoding = encodingText === 'JSON' ? 'JSON' : 'TEXT';
  const format = str(r, get(o, 'accessLogFormat'), at('accessLogFormat'));
  if (format !== undefined && format.length > MAX_ACCESS_LOG_FORMAT_CHARS)
    r.error(at('accessLogFormat'), `is longer than ${MAX_ACCESS_LOG_FORMAT_CHARS} characters`);
  if (r.failed) return {};
  if (!path) {
    const set = ['accessLogEncoding', 'accessLogFormat'].filter((k) => get(o, k) !== undefined);
    for (const k of set)
      r.info(
        at(k),
        'without accessLogFile only the built-in `envoy` access log provider (Telemetry, defaultProviders) uses it, as istiod',
        'ignored-field',
      );
    if (encoding === 'TEXT' && !format) return {};
    return { formatting: formatOf(r, at, encoding, format) };
  }
  return { accessLog: { path, ...formatOf(r, at, encoding, format) } };
}

function formatOf(
  r: Reader,
  at: (k: string) => string,
  encoding: 'TEXT' | 'JSON',
  format: string | undefined,
): MeshAccessLogFormat {
  if (encoding === 'TEXT') return format ? { encoding, text: format } : { encoding };
  if (!format) return { encoding };
  const json = jsonObject(format);
  if (typeof json === 'string') {
    r.warn(
      at('accessLogFormat'),
      `${json}: istiod logs an error and uses its default JSON access log format, and so does meshsnap`,
      'invalid-json-format',
    );
    return { encoding };
  }
  return { encoding, json };
}

/** `defaultProviders`: the access log and tracing provider names (empty ones dropped); `metrics` is reported as not applied. */
function readDefaultProviders(
  r: Reader,
  v: unknown,
  path: string,
): { readonly accessLogging?: string[]; readonly tracing?: string[] } {
  const o = fields(r, v, path, ['accessLogging', 'tracing', 'metrics']);
  if (!o) return {};
  strList(r, get(o, 'metrics'), `${path}.metrics`);
  if (get(o, 'metrics') !== undefined)
    r.warn(
      `${path}.metrics`,
      'default metrics providers are not applied by meshsnap (only accessLogging and tracing are)',
      'unsupported-field',
    );
  const names = (k: 'accessLogging' | 'tracing') =>
    strList(r, get(o, k), `${path}.${k}`, MAX_DEFAULT_PROVIDERS)?.filter((n) => n !== '');
  return compact({ accessLogging: names('accessLogging'), tracing: names('tracing') });
}

/** Bound on `defaultProviders.accessLogging` and `defaultProviders.tracing`. */
export const MAX_DEFAULT_PROVIDERS = 64;

/** A JSON object within the depth bound, or why not. */
function jsonObject(text: string): Readonly<Record<string, JsonValue>> | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return `accessLogFormat is not JSON (${e instanceof Error ? e.message.slice(0, 80) : 'parse error'})`;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return 'accessLogFormat is not a JSON object';
  const depth = (v: unknown, d: number): boolean =>
    d <= MAX_ACCESS_LOG_JSON_DEPTH &&
    (v === null || typeof v !== 'object' || Object.values(v as object).every((x) => depth(x, d + 1)));
  if (!depth(value, 1)) return `accessLogFormat nests deeper than ${MAX_ACCESS_LOG_JSON_DEPTH} levels`;
  return value as Record<string, JsonValue>;
}

/** `REGISTRY_ONLY` or Istio's `{ mode: REGISTRY_ONLY }`. */
function outboundPolicy(r: Reader, v: unknown, path: string): MeshConfig['outboundTrafficPolicy'] | undefined {
  let mode: unknown = v;
  let modePath = path;
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const o = fields(r, v, path, ['mode']) ?? {};
    mode = get(o, 'mode');
    modePath = `${path}.mode`;
  }
  const s = str(r, mode, modePath);
  if (s === undefined) return undefined;
  if (s !== 'ALLOW_ANY' && s !== 'REGISTRY_ONLY') {
    r.error(modePath, `must be ALLOW_ANY or REGISTRY_ONLY, got "${s.slice(0, 40)}"`);
    return undefined;
  }
  return s;
}

/**
 * `caCertificates`: the roots istio-agent trusts (its business: the certificates are not read) and
 * the trust domains each serves, which istiod's inbound mTLS accepts besides the mesh's
 * (TrustDomainsForValidation).
 */
function readCaTrustDomains(r: Reader, v: unknown, path: string): string[] {
  const out: string[] = [];
  list(
    r,
    v,
    path,
    (item, p) => {
      const o = fields(r, item, p, ['pem', 'spiffeBundleUrl', 'certSigners', 'trustDomains']);
      for (const td of (o && strList(r, get(o, 'trustDomains'), `${p}.trustDomains`, 64)) ?? []) out.push(td);
      return undefined;
    },
    64,
  );
  return out;
}

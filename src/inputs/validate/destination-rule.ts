/**
 * DestinationRule (networking.istio.io) → model/istio.ts. As for VirtualServices, one invalid
 * part invalidates the whole object (istiod's webhook would reject it).
 */
import type { Origin } from '../../model/diagnostics.js';
import type {
  ClientTLSSettings,
  ConsistentHashLB,
  DestinationRule,
  LoadBalancerSettings,
  LocalityLbSetting,
  OutlierDetection,
  PortTrafficPolicy,
  RetryBudget,
  SimpleLB,
  Subset,
  TLSMode,
  TrafficPolicy,
  TunnelSettings,
  ZoneAwareLbSetting,
} from '../../model/istio.js';
import { isIpOrCidr } from './authorization-policy.js';
import { isFqdn } from './workload-entry.js';
import { portSelector, workloadSelector } from './common-istio.js';
import { duration } from './duration.js';
import { readMeta } from './meta.js';
import {
  bool,
  compact,
  fields,
  get,
  int,
  list,
  mapOf,
  num,
  requiredStr,
  str,
  strList,
  strMap,
  type Raw,
  type Reader,
} from './reader.js';
import { checkExportTo } from './export-to.js';
import { connectionPool } from './connection-pool.js';

const SIMPLE_LB: readonly SimpleLB[] = [
  'UNSPECIFIED',
  'LEAST_CONN',
  'RANDOM',
  'PASSTHROUGH',
  'ROUND_ROBIN',
  'LEAST_REQUEST',
];
const TLS_MODES: readonly TLSMode[] = ['DISABLE', 'SIMPLE', 'MUTUAL', 'ISTIO_MUTUAL'];

export function readDestinationRule(
  r: Reader,
  raw: Raw,
  origin: Origin,
  apiVersion: string,
): DestinationRule | undefined {
  const meta = readMeta(r, raw, true, 'subdomain');
  const spec = fields(r, get(raw, 'spec'), 'spec', [
    'host',
    'trafficPolicy',
    'subsets',
    'exportTo',
    'workloadSelector',
  ]);
  if (!spec) {
    r.error('spec', 'is required', 'missing-field');
    return undefined;
  }
  const host = requiredStr(r, get(spec, 'host'), 'spec.host');
  const trafficPolicy = policy(r, get(spec, 'trafficPolicy'), 'spec.trafficPolicy', true);
  const subsets = list(r, get(spec, 'subsets'), 'spec.subsets', (v, p): Subset | undefined => {
    const o = fields(r, v, p, ['name', 'labels', 'trafficPolicy']);
    if (!o) return undefined;
    const name = requiredStr(r, get(o, 'name'), `${p}.name`);
    const labels = strMap(r, get(o, 'labels'), `${p}.labels`);
    const tp = policy(r, get(o, 'trafficPolicy'), `${p}.trafficPolicy`, true);
    return name === undefined ? undefined : compact({ name, labels, trafficPolicy: tp });
  });
  const seen = new Set<string>();
  subsets?.forEach((s, i) => {
    if (seen.has(s.name)) r.error(`spec.subsets[${i}].name`, `duplicate subset name "${s.name}"`);
    seen.add(s.name);
  });
  const exportTo = strList(r, get(spec, 'exportTo'), 'spec.exportTo');
  const selector = workloadSelector(r, get(spec, 'workloadSelector'), 'spec.workloadSelector');
  checkExportTo(r, exportTo, 'spec.exportTo', meta?.namespace ?? '', {
    allowNone: false,
    selectorRule: selector !== undefined,
  });
  if (!meta || r.failed || host === undefined) return undefined;
  return {
    kind: 'DestinationRule',
    apiVersion,
    meta,
    origin,
    spec: compact({ host, trafficPolicy, subsets, exportTo, workloadSelector: selector }),
  };
}

const POLICY_FIELDS = ['loadBalancer', 'connectionPool', 'outlierDetection', 'tls'];

function policy(r: Reader, v: unknown, path: string, withPorts: boolean): TrafficPolicy | undefined {
  const o = fields(
    r,
    v,
    path,
    withPorts
      ? [...POLICY_FIELDS, 'portLevelSettings', 'retryBudget', 'proxyProtocol', 'tunnel']
      : [...POLICY_FIELDS, 'port'],
  );
  if (!o) return undefined;
  const base = compact({
    loadBalancer: loadBalancer(r, get(o, 'loadBalancer'), `${path}.loadBalancer`),
    connectionPool: connectionPool(r, get(o, 'connectionPool'), `${path}.connectionPool`),
    outlierDetection: outlier(r, get(o, 'outlierDetection'), `${path}.outlierDetection`),
    tls: tls(r, get(o, 'tls'), `${path}.tls`),
  });
  if (!withPorts) return base;
  const retryBudget = budget(r, get(o, 'retryBudget'), `${path}.retryBudget`);
  const proxyProtocol = proxyProtocolOf(r, get(o, 'proxyProtocol'), `${path}.proxyProtocol`);
  const tunnel = tunnelOf(r, get(o, 'tunnel'), `${path}.tunnel`);
  if (tunnel && proxyProtocol) r.error(`${path}.tunnel`, 'tunnel and proxyProtocol must not be set together');
  const portLevelSettings = list(
    r,
    get(o, 'portLevelSettings'),
    `${path}.portLevelSettings`,
    (item, p): PortTrafficPolicy | undefined => {
      const pl = policy(r, item, p, false);
      const po = item !== null && typeof item === 'object' && !Array.isArray(item) ? (item as Raw) : {};
      const port = portSelector(r, get(po, 'port'), `${p}.port`);
      if (port?.number === undefined && !r.failed)
        r.error(`${p}.port`, 'a port-level setting needs port.number', 'missing-field');
      return pl ? compact({ port, ...pl }) : undefined;
    },
  );
  return compact({ ...base, portLevelSettings, retryBudget, proxyProtocol, tunnel });
}

/** istiod's validateTunnelSettings: CONNECT (default) or POST, to an FQDN or IP and a port. */
function tunnelOf(r: Reader, v: unknown, path: string): TunnelSettings | undefined {
  const o = fields(r, v, path, ['protocol', 'targetHost', 'targetPort']);
  if (!o) return undefined;
  const protocol = str(r, get(o, 'protocol'), `${path}.protocol`) || 'CONNECT';
  if (protocol !== 'CONNECT' && protocol !== 'POST') r.error(`${path}.protocol`, 'must be "CONNECT" or "POST"');
  const targetHost = requiredStr(r, get(o, 'targetHost'), `${path}.targetHost`);
  if (targetHost !== undefined && !isFqdn(targetHost) && (targetHost.includes('/') || !isIpOrCidr(targetHost)))
    r.error(`${path}.targetHost`, `"${targetHost.slice(0, 60)}" is not a valid FQDN or IP address`);
  const targetPort = int(r, get(o, 'targetPort'), `${path}.targetPort`, 1, 65535);
  if (get(o, 'targetPort') === undefined) r.error(`${path}.targetPort`, 'is required', 'missing-field');
  if (targetHost === undefined || targetPort === undefined || r.failed) return undefined;
  return { protocol: protocol as TunnelSettings['protocol'], targetHost, targetPort };
}

function proxyProtocolOf(r: Reader, v: unknown, path: string): TrafficPolicy['proxyProtocol'] {
  const o = fields(r, v, path, ['version']);
  if (!o) return undefined;
  const version = str(r, get(o, 'version'), `${path}.version`) ?? 'V1';
  if (version !== 'V1' && version !== 'V2') {
    r.error(`${path}.version`, 'must be one of V1, V2');
    return undefined;
  }
  return { version };
}

function budget(r: Reader, v: unknown, path: string): RetryBudget | undefined {
  const o = fields(r, v, path, ['percent', 'budgetInterval', 'minRetryConcurrency']);
  if (!o) return undefined;
  // Envoy's RetryBudget.budget_interval is newer than the Envoy API meshsnap encodes with.
  if (get(o, 'budgetInterval') !== undefined)
    r.warn(
      `${path}.budgetInterval`,
      'is not applied: the Envoy API meshsnap encodes has no budget_interval (Envoy uses its default)',
      'unsupported-field',
    );
  return compact({
    percent: num(r, get(o, 'percent'), `${path}.percent`, 0, 100),
    minRetryConcurrency: int(r, get(o, 'minRetryConcurrency'), `${path}.minRetryConcurrency`),
  });
}

function warmup(r: Reader, v: unknown, path: string): LoadBalancerSettings['warmup'] {
  const o = fields(r, v, path, ['duration', 'minimumPercent', 'aggression']);
  if (!o) return undefined;
  const durationMs = duration(r, get(o, 'duration'), `${path}.duration`);
  if (durationMs === undefined) {
    if (!r.failed) r.error(`${path}.duration`, 'is required', 'missing-field');
    return undefined;
  }
  const aggression = num(r, get(o, 'aggression'), `${path}.aggression`);
  if (aggression !== undefined && aggression <= 0) r.error(`${path}.aggression`, 'must be greater than 0');
  return compact({
    durationMs,
    minimumPercent: num(r, get(o, 'minimumPercent'), `${path}.minimumPercent`, 0, 100),
    aggression,
  });
}

function loadBalancer(r: Reader, v: unknown, path: string): LoadBalancerSettings | undefined {
  const o = fields(r, v, path, [
    'simple',
    'consistentHash',
    'localityLbSetting',
    'zoneAwareLbSetting',
    'warmupDurationSecs',
    'warmup',
    'backendUtilization',
  ]);
  if (!o) return undefined;
  // istiod reads no part of it yet (no Envoy client-side weighted round robin from it).
  if (get(o, 'backendUtilization') !== undefined)
    r.warn(
      `${path}.backendUtilization`,
      'is not applied: istiod does not translate it to Envoy configuration either',
      'unsupported-field',
    );
  const simple = str(r, get(o, 'simple'), `${path}.simple`);
  if (simple !== undefined && !(SIMPLE_LB as readonly string[]).includes(simple)) {
    r.error(`${path}.simple`, `unknown load balancer "${simple.slice(0, 40)}", must be one of ${SIMPLE_LB.join(', ')}`);
  }
  const consistentHash = hashLb(r, get(o, 'consistentHash'), `${path}.consistentHash`);
  if (simple !== undefined && consistentHash) r.error(path, 'cannot set both simple and consistentHash');
  const localityLbSetting = locality(r, get(o, 'localityLbSetting'), `${path}.localityLbSetting`);
  const zoneAwareLbSetting = zoneAware(r, get(o, 'zoneAwareLbSetting'), `${path}.zoneAwareLbSetting`);
  if (localityLbSetting && zoneAwareLbSetting)
    r.error(`${path}.zoneAwareLbSetting`, 'only one of localityLbSetting and zoneAwareLbSetting can be set');
  return compact({
    simple: simple as SimpleLB | undefined,
    consistentHash,
    localityLbSetting,
    zoneAwareLbSetting,
    warmupDurationSecsMs: duration(r, get(o, 'warmupDurationSecs'), `${path}.warmupDurationSecs`),
    warmup: warmup(r, get(o, 'warmup'), `${path}.warmup`),
  });
}

const HASH_KEYS = ['httpHeaderName', 'httpCookie', 'useSourceIp', 'httpQueryParameterName'];

function hashLb(r: Reader, v: unknown, path: string): ConsistentHashLB | undefined {
  const o = fields(r, v, path, [...HASH_KEYS, 'ringHash', 'maglev', 'minimumRingSize']);
  if (!o) return undefined;
  const keys = HASH_KEYS.filter((k) => get(o, k) !== undefined && get(o, k) !== null);
  if (keys.length !== 1)
    r.error(
      path,
      keys.length === 0
        ? `needs one hash key: ${HASH_KEYS.join(', ')}`
        : `sets several hash keys (${keys.join(', ')}), only one is allowed`,
    );
  const c = fields(r, get(o, 'httpCookie'), `${path}.httpCookie`, ['name', 'path', 'ttl', 'attributes']);
  const httpCookie = c
    ? (() => {
        const name = requiredStr(r, get(c, 'name'), `${path}.httpCookie.name`);
        const cookie = compact({
          name: name ?? '',
          path: str(r, get(c, 'path'), `${path}.httpCookie.path`),
          ttlMs: duration(r, get(c, 'ttl'), `${path}.httpCookie.ttl`),
          attributes: list(r, get(c, 'attributes'), `${path}.httpCookie.attributes`, (a, p) => {
            const ao = fields(r, a, p, ['name', 'value']);
            if (!ao) return undefined;
            const attrName = requiredStr(r, get(ao, 'name'), `${p}.name`);
            const value = str(r, get(ao, 'value'), `${p}.value`);
            return attrName === undefined ? undefined : compact({ name: attrName, value });
          }),
        });
        return cookie;
      })()
    : undefined;
  const ring = fields(r, get(o, 'ringHash'), `${path}.ringHash`, ['minimumRingSize']);
  const maglev = fields(r, get(o, 'maglev'), `${path}.maglev`, ['tableSize']);
  if (ring && maglev) r.error(path, 'cannot set both ringHash and maglev');
  return compact({
    httpHeaderName: str(r, get(o, 'httpHeaderName'), `${path}.httpHeaderName`),
    httpCookie,
    useSourceIp: bool(r, get(o, 'useSourceIp'), `${path}.useSourceIp`),
    httpQueryParameterName: str(r, get(o, 'httpQueryParameterName'), `${path}.httpQueryParameterName`),
    ringHash: ring
      ? compact({
          minimumRingSize: int(r, get(ring, 'minimumRingSize'), `${path}.ringHash.minimumRingSize`, 0, 2 ** 53),
        })
      : undefined,
    maglev: maglev
      ? compact({ tableSize: int(r, get(maglev, 'tableSize'), `${path}.maglev.tableSize`, 0, 2 ** 53) })
      : undefined,
    minimumRingSize: int(r, get(o, 'minimumRingSize'), `${path}.minimumRingSize`, 0, 2 ** 53),
  });
}

export function locality(r: Reader, v: unknown, path: string): LocalityLbSetting | undefined {
  const o = fields(r, v, path, ['enabled', 'distribute', 'failover', 'failoverPriority']);
  if (!o) return undefined;
  return compact({
    enabled: bool(r, get(o, 'enabled'), `${path}.enabled`),
    distribute: list(r, get(o, 'distribute'), `${path}.distribute`, (item, p) => {
      const d = fields(r, item, p, ['from', 'to']);
      if (!d) return undefined;
      const from = requiredStr(r, get(d, 'from'), `${p}.from`);
      const to = mapOf(r, get(d, 'to'), `${p}.to`, (w, wp) => int(r, w, wp, 0, 100)) ?? {};
      return from === undefined ? undefined : { from, to };
    }),
    failover: list(r, get(o, 'failover'), `${path}.failover`, (item, p) => {
      const f = fields(r, item, p, ['from', 'to']);
      if (!f) return undefined;
      const from = requiredStr(r, get(f, 'from'), `${p}.from`);
      const to = requiredStr(r, get(f, 'to'), `${p}.to`);
      return from !== undefined && to !== undefined ? { from, to } : undefined;
    }),
    failoverPriority: strList(r, get(o, 'failoverPriority'), `${path}.failoverPriority`),
  });
}

const TOPOLOGY_LABELS = ['topology.kubernetes.io/region', 'topology.kubernetes.io/zone', 'topology.istio.io/subzone'];

/** istiod's ValidateZoneAwareLbSetting: region-level failover only; zones and subzones are Envoy's. */
export function zoneAware(r: Reader, v: unknown, path: string): ZoneAwareLbSetting | undefined {
  const o = fields(r, v, path, ['enabled', 'failover', 'failoverPriority', 'minClusterSize']);
  if (!o) return undefined;
  const failover = list(r, get(o, 'failover'), `${path}.failover`, (item, p) => {
    const f = fields(r, item, p, ['from', 'to']);
    if (!f) return undefined;
    const from = str(r, get(f, 'from'), `${p}.from`) ?? '';
    const to = str(r, get(f, 'to'), `${p}.to`) ?? '';
    if (from === to) r.error(p, 'zone aware lb failover settings must specify different regions');
    if (from.includes('/') || to.includes('/'))
      r.error(p, 'zone aware lb failover only specifies region; zone and subzone failover are handled automatically');
    if (from.includes('*') || to.includes('*'))
      r.error(p, 'zone aware lb failover region should not contain a "*" wildcard');
    return { from, to };
  });
  const failoverPriority = strList(r, get(o, 'failoverPriority'), `${path}.failoverPriority`);
  failoverPriority?.forEach((l, i) => {
    if (TOPOLOGY_LABELS.includes(l))
      r.error(
        `${path}.failoverPriority[${i}]`,
        `must not use topology label "${l}": region- and zone-level routing are handled automatically`,
      );
  });
  return compact({
    enabled: bool(r, get(o, 'enabled'), `${path}.enabled`),
    failover,
    failoverPriority,
    minClusterSize: int(r, get(o, 'minClusterSize'), `${path}.minClusterSize`, 1, 2 ** 32 - 1),
  });
}

export function outlier(r: Reader, v: unknown, path: string): OutlierDetection | undefined {
  const o = fields(r, v, path, [
    'consecutiveErrors',
    'consecutive5xxErrors',
    'consecutiveGatewayErrors',
    'consecutiveLocalOriginFailures',
    'splitExternalLocalOriginErrors',
    'interval',
    'baseEjectionTime',
    'maxEjectionPercent',
    'minHealthPercent',
    'outlierDetectionHttpErrorCodes',
  ]);
  if (!o) return undefined;
  const codes = list(r, get(o, 'outlierDetectionHttpErrorCodes'), `${path}.outlierDetectionHttpErrorCodes`, (c, p) =>
    int(r, c, p, 100, 599),
  );
  // istiod writes them as the upstream HttpProtocolOptions' outlier_detection.error_matcher, a field
  // newer than the Envoy API meshsnap encodes: Envoy keeps counting 5xx (consecutive5xxErrors).
  if (codes?.length)
    r.warn(
      `${path}.outlierDetectionHttpErrorCodes`,
      'is not applied: the Envoy API meshsnap encodes has no HttpProtocolOptions.outlier_detection (Envoy counts 5xx responses as errors)',
      'unsupported-field',
    );
  const u32 = (key: string): number | undefined => int(r, get(o, key), `${path}.${key}`, 0, 2 ** 32 - 1);
  return compact({
    consecutiveErrors: u32('consecutiveErrors'),
    consecutive5xxErrors: u32('consecutive5xxErrors'),
    consecutiveGatewayErrors: u32('consecutiveGatewayErrors'),
    consecutiveLocalOriginFailures: u32('consecutiveLocalOriginFailures'),
    splitExternalLocalOriginErrors: bool(
      r,
      get(o, 'splitExternalLocalOriginErrors'),
      `${path}.splitExternalLocalOriginErrors`,
    ),
    intervalMs: duration(r, get(o, 'interval'), `${path}.interval`),
    baseEjectionTimeMs: duration(r, get(o, 'baseEjectionTime'), `${path}.baseEjectionTime`),
    maxEjectionPercent: num(r, get(o, 'maxEjectionPercent'), `${path}.maxEjectionPercent`, 0, 100),
    minHealthPercent: num(r, get(o, 'minHealthPercent'), `${path}.minHealthPercent`, 0, 100),
  });
}

function tls(r: Reader, v: unknown, path: string): ClientTLSSettings | undefined {
  const o = fields(r, v, path, [
    'mode',
    'clientCertificate',
    'privateKey',
    'caCertificates',
    'caCrl',
    'credentialName',
    'subjectAltNames',
    'sni',
    'insecureSkipVerify',
  ]);
  if (!o) return undefined;
  const rawMode = str(r, get(o, 'mode'), `${path}.mode`) ?? 'DISABLE';
  if (!(TLS_MODES as readonly string[]).includes(rawMode))
    r.error(`${path}.mode`, `unknown TLS mode "${rawMode.slice(0, 40)}", must be one of ${TLS_MODES.join(', ')}`);
  const s = (key: string): string | undefined => {
    const x = str(r, get(o, key), `${path}.${key}`);
    return x === '' ? undefined : x;
  };
  /** A file on the proxy; key or certificate material pasted inline is refused and never quoted back. */
  const filePath = (key: string): string | undefined => {
    const x = s(key);
    if (x !== undefined && /-----BEGIN|[\r\n]/.test(x)) {
      r.error(
        `${path}.${key}`,
        'must be a file path on the proxy; inline key or certificate material (PEM) is not accepted',
      );
      return undefined;
    }
    return x;
  };
  const out = compact({
    mode: rawMode as TLSMode,
    clientCertificate: filePath('clientCertificate'),
    privateKey: filePath('privateKey'),
    caCertificates: filePath('caCertificates'),
    caCrl: filePath('caCrl'),
    credentialName: s('credentialName'),
    subjectAltNames: strList(r, get(o, 'subjectAltNames'), `${path}.subjectAltNames`),
    sni: s('sni'),
    insecureSkipVerify: bool(r, get(o, 'insecureSkipVerify'), `${path}.insecureSkipVerify`),
  });
  if (
    out.mode === 'MUTUAL' &&
    out.credentialName === undefined &&
    (out.clientCertificate === undefined || out.privateKey === undefined)
  ) {
    r.error(path, 'MUTUAL needs clientCertificate and privateKey, or credentialName', 'missing-field');
  }
  return out;
}

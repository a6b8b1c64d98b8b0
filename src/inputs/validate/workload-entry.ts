/**
 * WorkloadEntry and WorkloadGroup (networking.istio.io) → model/service-entry.ts, with istiod's
 * validation (pkg/config/validation ValidateWorkloadEntry / validateWorkloadEntry,
 * ValidateWorkloadGroup). The spec reader is shared with a ServiceEntry's inline `endpoints`.
 */
import type { Origin } from '../../model/diagnostics.js';
import {
  HEALTH_CHECKS_ANNOTATION,
  type WorkloadEntry,
  type WorkloadEntrySpec,
  type WorkloadGroup,
} from '../../model/service-entry.js';
import { isIpOrCidr } from './authorization-policy.js';
import { isDns1123Label, readMeta } from './meta.js';
import { compact, fields, get, int, list, mapOf, obj, str, strMap, type Raw, type Reader } from './reader.js';

const WORKLOAD_ENTRY_FIELDS = ['address', 'ports', 'labels', 'network', 'locality', 'weight', 'serviceAccount'];

export const isIpAddress = (s: string): boolean => !s.includes('/') && isIpOrCidr(s);

/** istiod's agent.ValidateFQDN: DNS-1123 labels (a leading `*.` allowed), at most 255 characters. */
export function isFqdn(s: string): boolean {
  const name = s.startsWith('*.') ? s.slice(2) : s;
  if (s.length === 0 || s.length > 255) return false;
  return name.split('.').every((l) => l.length <= 63 && /^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?$/.test(l));
}

export interface EntryRules {
  /** Service port names the `ports` keys must be among (a ServiceEntry's endpoints). */
  readonly servicePorts?: ReadonlySet<string>;
  /** Whether the address may be a DNS name (WorkloadEntries and DNS ServiceEntries) rather than only an IP. */
  readonly allowFqdn: boolean;
}

/** Reads a WorkloadEntry spec (or an inline endpoint) as istiod's validateWorkloadEntry checks it. */
export function workloadEntrySpec(
  r: Reader,
  v: unknown,
  path: string,
  rules: EntryRules,
): WorkloadEntrySpec | undefined {
  const o = fields(r, v, path, WORKLOAD_ENTRY_FIELDS);
  if (!o) {
    if (v === undefined || v === null) r.error(path, 'endpoint cannot be nil', 'missing-field');
    return undefined;
  }
  const before = r.errorCount;
  const address = str(r, get(o, 'address'), `${path}.address`) || undefined;
  const network = str(r, get(o, 'network'), `${path}.network`) || undefined;
  if (address === undefined) {
    if (network === undefined) r.error(`${path}.address`, 'address is required', 'missing-field');
    else r.warn(`${path}.address`, `address is unset with network "${network.slice(0, 60)}"`, 'missing-address');
  } else if (address.startsWith('unix://')) {
    r.error(`${path}.address`, 'unix domain socket endpoints are not supported by meshsnap');
  } else if (!isIpAddress(address)) {
    if (!rules.allowFqdn)
      r.error(`${path}.address`, `endpoint address "${address.slice(0, 60)}" is not a valid IP address`);
    else if (!isFqdn(address))
      r.error(`${path}.address`, `endpoint address "${address.slice(0, 60)}" is not a valid FQDN or an IP address`);
  }
  const ports = mapOf(r, get(o, 'ports'), `${path}.ports`, (p, pp) => int(r, p, pp, 1, 65535));
  for (const name of Object.keys(ports ?? {})) {
    if (rules.servicePorts && !rules.servicePorts.has(name))
      r.error(`${path}.ports.${name}`, `endpoint port ${ports?.[name]} is not defined by the service entry`);
    if (!isDns1123Label(name)) r.error(`${path}.ports.${name}`, `invalid port name: ${name.slice(0, 60)}`);
  }
  const labels = strMap(r, get(o, 'labels'), `${path}.labels`);
  const locality = str(r, get(o, 'locality'), `${path}.locality`) || undefined;
  const weight = int(r, get(o, 'weight'), `${path}.weight`, 0, 2 ** 32 - 1) || undefined;
  const serviceAccount = str(r, get(o, 'serviceAccount'), `${path}.serviceAccount`) || undefined;
  if (r.errorCount !== before) return undefined;
  return compact({
    address,
    ports: ports && Object.keys(ports).length ? ports : undefined,
    labels: labels && Object.keys(labels).length ? labels : undefined,
    network,
    locality,
    weight,
    serviceAccount,
  });
}

export function readWorkloadEntry(r: Reader, raw: Raw, origin: Origin, apiVersion: string): WorkloadEntry | undefined {
  const meta = readMeta(r, raw, true, 'subdomain');
  const spec = workloadEntrySpec(r, get(raw, 'spec'), 'spec', { allowFqdn: true });
  const healthy = isHealthy(r, raw, meta?.annotations[HEALTH_CHECKS_ANNOTATION]);
  if (!meta || !spec || r.failed) return undefined;
  // istiod merges metadata.labels over spec.labels (ConvertWorkloadEntry).
  const labels = { ...spec.labels, ...meta.labels };
  const sorted = Object.fromEntries(
    Object.keys(labels)
      .sort()
      .map((k) => [k, labels[k] as string]),
  );
  return {
    kind: 'WorkloadEntry',
    apiVersion,
    meta,
    origin,
    spec: compact({ ...spec, labels: Object.keys(sorted).length ? sorted : undefined }),
    healthy,
  };
}

/**
 * istiod's isHealthy: with health checks on (the annotation parses as true), only a `Healthy`
 * condition with status `True` counts; a new entry without it is unhealthy. Otherwise healthy.
 */
function isHealthy(r: Reader, raw: Raw, annotation: string | undefined): boolean {
  if (annotation === undefined || !['1', 't', 'T', 'true', 'TRUE', 'True'].includes(annotation)) return true;
  const status = obj(r, get(raw, 'status'), 'status');
  const conditions = status ? get(status, 'conditions') : undefined;
  if (!Array.isArray(conditions)) return false;
  for (const c of conditions as unknown[]) {
    if (c === null || typeof c !== 'object' || Array.isArray(c)) continue;
    if (get(c as Raw, 'type') === 'Healthy') return get(c as Raw, 'status') === 'True';
  }
  return false;
}

export function readWorkloadGroup(r: Reader, raw: Raw, origin: Origin, apiVersion: string): WorkloadGroup | undefined {
  const meta = readMeta(r, raw, true, 'subdomain');
  const spec = fields(r, get(raw, 'spec'), 'spec', ['metadata', 'template', 'probe']);
  if (!spec) {
    r.error('spec', 'is required', 'missing-field');
    return undefined;
  }
  const m = fields(r, get(spec, 'metadata'), 'spec.metadata', ['labels', 'annotations']);
  const labels = m ? strMap(r, get(m, 'labels'), 'spec.metadata.labels') : undefined;
  const annotations = m ? strMap(r, get(m, 'annotations'), 'spec.metadata.annotations') : undefined;
  if (get(spec, 'template') === undefined || get(spec, 'template') === null)
    r.error('spec.template', 'template is required', 'missing-field');
  // The template's address is filled in at registration: it is not required here (istiod skips validateWorkloadEntry).
  const t = fields(r, get(spec, 'template'), 'spec.template', WORKLOAD_ENTRY_FIELDS);
  const template = t
    ? compact({
        ports: mapOf(r, get(t, 'ports'), 'spec.template.ports', (p, pp) => int(r, p, pp, 1, 65535)),
        labels: strMap(r, get(t, 'labels'), 'spec.template.labels'),
        network: str(r, get(t, 'network'), 'spec.template.network') || undefined,
        locality: str(r, get(t, 'locality'), 'spec.template.locality') || undefined,
        weight: int(r, get(t, 'weight'), 'spec.template.weight') || undefined,
        serviceAccount: str(r, get(t, 'serviceAccount'), 'spec.template.serviceAccount') || undefined,
      })
    : undefined;
  probe(r, get(spec, 'probe'), 'spec.probe');
  if (!meta || !template || r.failed) return undefined;
  const metadata = compact({ labels, annotations });
  return {
    kind: 'WorkloadGroup',
    apiVersion,
    meta,
    origin,
    spec: compact({ metadata: Object.keys(metadata).length ? metadata : undefined, template }),
  };
}

/** istiod's validateReadinessProbe: non-negative counters, one health check method it knows. */
function probe(r: Reader, v: unknown, path: string): void {
  const methods = ['httpGet', 'tcpSocket', 'exec', 'grpc'];
  const counters = ['initialDelaySeconds', 'timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold'];
  const o = fields(r, v, path, [...counters, ...methods]);
  if (!o) return;
  for (const c of counters) int(r, get(o, c), `${path}.${c}`, 0, 2 ** 31 - 1);
  const set = methods.filter((m) => get(o, m) !== undefined && get(o, m) !== null);
  if (set.length !== 1) {
    r.error(path, set.length ? 'only one health check method may be set' : 'a health check method is required');
    return;
  }
  const method = set[0] as string;
  const m = fields(r, get(o, method), `${path}.${method}`, PROBE_METHOD_FIELDS[method] ?? []);
  if (!m) return;
  if (method === 'grpc') {
    // Not in istiod's switch: its default case refuses the probe.
    r.error(`${path}.grpc`, 'unknown health check method grpc (istiod supports httpGet, tcpSocket, exec)');
    return;
  }
  if (method === 'exec') {
    const command = list(r, get(m, 'command'), `${path}.exec.command`, (x) => x);
    if (!command?.length) r.error(`${path}.exec.command`, 'exec.command is required', 'missing-field');
    return;
  }
  const port = int(r, get(m, 'port'), `${path}.${method}.port`, 1, 65535);
  if (port === undefined && !r.failed) r.error(`${path}.${method}.port`, 'is required', 'missing-field');
  str(r, get(m, 'host'), `${path}.${method}.host`);
  if (method === 'httpGet') {
    str(r, get(m, 'path'), `${path}.httpGet.path`);
    const scheme = str(r, get(m, 'scheme'), `${path}.httpGet.scheme`);
    if (scheme && scheme !== 'HTTP' && scheme !== 'HTTPS')
      r.error(`${path}.httpGet.scheme`, 'httpGet.scheme must be one of "HTTPS", "HTTP"');
    // istiod's ValidateProbeHeaderName on each header.
    list(r, get(m, 'httpHeaders'), `${path}.httpGet.httpHeaders`, (h, p) => {
      const header = fields(r, h, p, ['name', 'value']);
      if (!header) return undefined;
      const name = str(r, get(header, 'name'), `${p}.name`) ?? '';
      str(r, get(header, 'value'), `${p}.value`);
      if (name === '') r.error(`${p}.name`, 'header name cannot be empty', 'missing-field');
      else if (!/^[-A-Za-z0-9]+$/.test(name))
        r.error(`${p}.name`, `header name ${name.slice(0, 60)} is not a valid header name`);
      return undefined;
    });
  }
}

/** The fields of each health check method (istio.io/api ReadinessProbe). */
const PROBE_METHOD_FIELDS: Readonly<Record<string, readonly string[]>> = {
  httpGet: ['path', 'port', 'host', 'scheme', 'httpHeaders'],
  tcpSocket: ['host', 'port'],
  exec: ['command'],
  grpc: ['port', 'service'],
};

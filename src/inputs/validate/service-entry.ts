/**
 * ServiceEntry (networking.istio.io) → model/service-entry.ts, with istiod's validation
 * (pkg/config/validation ValidateServiceEntry). As for the other Istio kinds, any error makes the
 * whole object invalid (istiod's webhook rejects it); istiod's warnings are warnings here.
 *
 * Resolution `DYNAMIC_DNS` as istiod accepts it: wildcard hosts only, no addresses, no endpoints,
 * ports HTTP, TLS, GRPC or HTTP2, and not `MESH_INTERNAL` with an `istio.io/use-waypoint` label.
 * Not accepted: unix domain socket endpoints.
 */
import type { Origin } from '../../model/diagnostics.js';
import {
  DYNAMIC_DNS_PROTOCOLS,
  SE_LOCATIONS,
  SE_RESOLUTIONS,
  type ServiceEntry,
  type ServiceEntryPort,
  type ServiceEntryResolution,
} from '../../model/service-entry.js';
import type { Protocol } from '../../model/service-model.js';
import { isIpOrCidr } from './authorization-policy.js';
import { isDns1123Label, readCreationTimestamp, readMeta } from './meta.js';
import { compact, fields, get, int, list, str, strList, strMap, type Raw, type Reader } from './reader.js';
import { isFqdn, workloadEntrySpec } from './workload-entry.js';

/** istiod's protocol.Parse (case-insensitive); HTTP_PROXY is HTTP. */
const PROTOCOLS: Readonly<Record<string, Protocol>> = {
  http: 'HTTP',
  http_proxy: 'HTTP',
  http2: 'HTTP2',
  https: 'HTTPS',
  grpc: 'GRPC',
  'grpc-web': 'GRPC-Web',
  tcp: 'TCP',
  tls: 'TLS',
  mongo: 'Mongo',
  redis: 'Redis',
  mysql: 'MySQL',
  udp: 'UDP',
};

export const parseIstioProtocol = (name: string): Protocol | undefined =>
  Object.hasOwn(PROTOCOLS, name.toLowerCase()) ? PROTOCOLS[name.toLowerCase()] : undefined;

const isHttpOrTls = (p: Protocol | undefined): boolean =>
  p === 'HTTP' || p === 'HTTP2' || p === 'GRPC' || p === 'GRPC-Web' || p === 'HTTPS' || p === 'TLS';

const SPEC_FIELDS = [
  'hosts',
  'addresses',
  'ports',
  'location',
  'resolution',
  'endpoints',
  'workloadSelector',
  'exportTo',
  'subjectAltNames',
];

export function readServiceEntry(r: Reader, raw: Raw, origin: Origin, apiVersion: string): ServiceEntry | undefined {
  const meta = readMeta(r, raw, true, 'subdomain');
  const spec = fields(r, get(raw, 'spec'), 'spec', SPEC_FIELDS);
  if (!spec) {
    r.error('spec', 'is required', 'missing-field');
    return undefined;
  }
  const resolution = oneOf(r, get(spec, 'resolution'), 'spec.resolution', SE_RESOLUTIONS, 'NONE');
  const location = oneOf(r, get(spec, 'location'), 'spec.location', SE_LOCATIONS, 'MESH_EXTERNAL');

  const selectorObj = fields(r, get(spec, 'workloadSelector'), 'spec.workloadSelector', ['labels']);
  const workloadSelector = selectorObj
    ? (strMap(r, get(selectorObj, 'labels'), 'spec.workloadSelector.labels') ?? {})
    : undefined;
  if (workloadSelector && Object.keys(workloadSelector).length === 0)
    r.warn(
      'spec.workloadSelector',
      'service entry: workload selector has no labels, will be applied to all services in namespace',
      'empty-selector',
    );
  const rawEndpoints = get(spec, 'endpoints');
  if (workloadSelector && rawEndpoints !== undefined && rawEndpoints !== null)
    r.error('spec', 'only one of WorkloadSelector or Endpoints is allowed in Service Entry');

  const hosts = strList(r, get(spec, 'hosts'), 'spec.hosts') ?? [];
  if (hosts.length === 0) r.error('spec.hosts', 'service entry must have at least one host', 'missing-field');
  hosts.forEach((h, i) => host(r, h, `spec.hosts[${i}]`));

  const addresses = strList(r, get(spec, 'addresses'), 'spec.addresses') ?? [];
  let cidr = false;
  addresses.forEach((a, i) => {
    if (a.includes('/')) cidr = true;
    if (!isIpOrCidr(a)) r.error(`spec.addresses[${i}]`, `${a.slice(0, 60)} is not a valid IP address or CIDR block`);
  });
  if (cidr && resolution !== 'NONE' && resolution !== 'STATIC')
    r.error('spec.addresses', 'CIDR addresses are allowed only for NONE/STATIC resolution types');

  const ports = list(r, get(spec, 'ports'), 'spec.ports', (v, p) => port(r, v, p)) ?? [];
  const names = new Set<string>();
  const numbers = new Set<number>();
  ports.forEach((p, i) => {
    if (names.has(p.name)) r.error(`spec.ports[${i}].name`, `service entry port name "${p.name}" already defined`);
    if (numbers.has(p.number)) r.error(`spec.ports[${i}].number`, `service entry port ${p.number} already defined`);
    names.add(p.name);
    numbers.add(p.number);
    if (addresses.length === 0 && (p.protocol === undefined || p.protocol === 'TCP'))
      r.warn(
        `spec.ports[${i}]`,
        'addresses are required for ports serving TCP (or unset) protocol when IP Autoallocation is not enabled',
        'tcp-port-without-address',
      );
  });

  const endpoints =
    rawEndpoints === undefined || rawEndpoints === null
      ? undefined
      : list(r, rawEndpoints, 'spec.endpoints', (v, p) =>
          workloadEntrySpec(r, v, p, { servicePorts: names, allowFqdn: resolution !== 'STATIC' }),
        );
  checkResolution(r, resolution, hosts, addresses, ports, endpoints?.length ?? 0, workloadSelector !== undefined);
  if (resolution === 'DYNAMIC_DNS')
    checkDynamicDns(r, hosts, addresses, ports, endpoints?.length ?? 0, location, meta?.labels);
  if (resolution !== 'NONE' && hosts.length > 1 && ports.some((p) => !isHttpOrTls(p.protocol)))
    r.error('spec.ports', 'multiple hosts provided with non-HTTP, non-TLS ports');

  const exportTo = strList(r, get(spec, 'exportTo'), 'spec.exportTo');
  checkExportTo(r, exportTo ?? [], meta?.namespace ?? '');
  const subjectAltNames = strList(r, get(spec, 'subjectAltNames'), 'spec.subjectAltNames');
  // Which of several namespaces' entries for one host a namespace sees: the oldest it may see.
  const created = readCreationTimestamp(r, raw);
  if (!meta || r.failed) return undefined;
  return {
    kind: 'ServiceEntry',
    apiVersion,
    meta,
    ...(created !== undefined ? { creationTimestamp: created } : {}),
    origin,
    spec: compact({
      hosts,
      addresses: addresses.length ? addresses : undefined,
      ports,
      location,
      resolution,
      endpoints,
      workloadSelector,
      exportTo: exportTo?.length ? exportTo : undefined,
      subjectAltNames: subjectAltNames?.length ? subjectAltNames : undefined,
    }),
  };
}

function oneOf<T extends string>(r: Reader, v: unknown, path: string, allowed: readonly T[], zero: T): T {
  const s = str(r, v, path);
  if (s === undefined || s === '') return zero;
  if ((allowed as readonly string[]).includes(s)) return s as T;
  r.error(path, `unknown value "${s.slice(0, 40)}", must be one of ${allowed.join(', ')}`);
  return zero;
}

/** istiod: `*` is invalid; otherwise a (wildcard) DNS name; a partial wildcard (`*foo.com`) is a warning. */
function host(r: Reader, h: string, path: string): void {
  if (h === '*') {
    r.error(path, `invalid host ${h}`);
    return;
  }
  const [first = '', rest] = splitFirst(h);
  const labelOk = first === '*' || /^(\*|\*-)?[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?$/.test(first);
  if (h.length > 255 || !labelOk || (rest !== undefined && !isFqdn(rest))) {
    r.error(path, `domain name "${h.slice(0, 80)}" invalid`);
    return;
  }
  if (h.includes('*') && !h.startsWith('*.'))
    r.warn(path, `partial wildcard "${h.slice(0, 80)}" not allowed`, 'partial-wildcard');
}

function splitFirst(h: string): [string, string | undefined] {
  const dot = h.indexOf('.');
  return dot < 0 ? [h, undefined] : [h.slice(0, dot), h.slice(dot + 1)];
}

function port(r: Reader, v: unknown, path: string): ServiceEntryPort | undefined {
  const o = fields(r, v, path, ['number', 'protocol', 'name', 'targetPort']);
  if (!o) {
    if (v === undefined || v === null) r.error(path, 'service entry port may not be null', 'missing-field');
    return undefined;
  }
  const before = r.errorCount;
  const number = int(r, get(o, 'number'), `${path}.number`, 1, 65535);
  if (number === undefined && r.errorCount === before) r.error(`${path}.number`, 'is required', 'missing-field');
  const name = str(r, get(o, 'name'), `${path}.name`) ?? '';
  if (!isDns1123Label(name)) r.error(`${path}.name`, `invalid port name: ${name.slice(0, 60)}`);
  const rawProtocol = str(r, get(o, 'protocol'), `${path}.protocol`) ?? '';
  const protocol = rawProtocol === '' ? undefined : parseIstioProtocol(rawProtocol);
  if (rawProtocol !== '' && protocol === undefined)
    r.error(`${path}.protocol`, `unsupported protocol: ${rawProtocol.slice(0, 40)}`);
  const targetPort = int(r, get(o, 'targetPort'), `${path}.targetPort`, 0, 65535) || undefined;
  if (r.errorCount !== before || number === undefined) return undefined;
  return compact({ number, protocol, name, targetPort });
}

function checkResolution(
  r: Reader,
  resolution: ServiceEntryResolution,
  hosts: readonly string[],
  addresses: readonly string[],
  ports: readonly ServiceEntryPort[],
  endpoints: number,
  selector: boolean,
): void {
  if (resolution === 'NONE') {
    if (endpoints) r.error('spec.endpoints', 'no endpoints should be provided for resolution type none');
    if (selector)
      r.warn(
        'spec.workloadSelector',
        'workloadSelector should not be set when resolution mode is NONE',
        'ignored-field',
      );
    return;
  }
  if (resolution === 'STATIC' || resolution === 'DYNAMIC_DNS') return;
  if (endpoints === 0) {
    const bad = hosts.findIndex((h) => !isFqdn(h));
    if (bad >= 0)
      r.error(
        `spec.hosts[${bad}]`,
        `hosts must be FQDN or contain only prefix wildcards if no endpoints are provided for resolution mode ${resolution}`,
      );
  }
  if (resolution === 'DNS_ROUND_ROBIN' && endpoints > 1)
    r.error('spec.endpoints', `there must only be 0 or 1 endpoint for resolution mode ${resolution}`);
  if (addresses.length > 0 && hosts.length > 1 && ports.some((p) => p.protocol === undefined || p.protocol === 'TCP'))
    r.warn(
      'spec.hosts',
      'service entry can not have more than one host specified simultaneously with address and tcp port',
      'multiple-hosts-tcp',
    );
}

/** istiod's ValidateServiceEntry, case DYNAMIC_DNS (and usesWaypoint). */
function checkDynamicDns(
  r: Reader,
  hosts: readonly string[],
  addresses: readonly string[],
  ports: readonly ServiceEntryPort[],
  endpoints: number,
  location: string,
  labels: Readonly<Record<string, string>> | undefined,
): void {
  const what = 'resolution type DYNAMIC_DNS';
  if (hosts.length === 0) r.error('spec.hosts', `at least one wildcard host must be provided for ${what}`);
  hosts.forEach((h, i) => {
    if (!h.startsWith('*')) r.error(`spec.hosts[${i}]`, 'host must be wildcarded for resolution mode DYNAMIC_DNS');
  });
  if (addresses.length > 0)
    r.error(
      'spec.addresses',
      `addresses cannot be set for ${what}. HTTP route domains will only be generated from the hosts field values`,
    );
  if (endpoints > 0)
    r.error(
      'spec.endpoints',
      `endpoints cannot be set for ${what}. Destination IP address determined from hosts field values`,
    );
  ports.forEach((p, i) => {
    if (p.protocol === undefined || !DYNAMIC_DNS_PROTOCOLS.includes(p.protocol))
      r.error(`spec.ports[${i}].protocol`, `only HTTP, TLS, GRPC, and HTTP2 protocols are supported for ${what}`);
  });
  const waypoint = labels?.['istio.io/use-waypoint'];
  if (location === 'MESH_INTERNAL' && waypoint && waypoint.toLowerCase() !== 'none')
    r.error('spec.location', `location MESH_INTERNAL with ${what} is not supported when using waypoints`);
}

/** istiod's validateExportTo for a ServiceEntry: `.`, `*`, `~` or namespace names, no duplicates, `*`/`~` alone. */
function checkExportTo(r: Reader, exportTo: readonly string[], namespace: string): void {
  const seen = new Set<string>();
  for (const [i, e] of exportTo.entries()) {
    const key = e === '.' ? namespace : e;
    if (seen.has(key)) {
      r.error(
        `spec.exportTo[${i}]`,
        key !== e
          ? `duplicate entries in exportTo: . and current namespace ${namespace}`
          : `duplicate entries in exportTo for entry ${e.slice(0, 60)}`,
      );
      continue;
    }
    if (e !== '*' && e !== '~' && e !== '.' && !isDns1123Label(e)) {
      r.error(`spec.exportTo[${i}]`, `only . or * or ~ or a valid namespace name is allowed, got "${e.slice(0, 60)}"`);
      continue;
    }
    seen.add(key);
  }
  if (seen.has('*') && exportTo.length > 1)
    r.error('spec.exportTo', 'cannot have both public (*) and non-public exportTo values for a resource');
  if (seen.has('~') && exportTo.length > 1)
    r.error('spec.exportTo', 'cannot export service entry to no one (~) and someone');
}

/**
 * Kubernetes Ingress and IngressClass (networking.k8s.io/v1) → model/ingress.ts, with the API
 * server's validation where it looks at what istiod reads (pkg/apis/networking/validation): a host
 * is a DNS-1123 subdomain (one leading `*.` allowed), not an IP; a path is absolute; a backend is a
 * service or a resource, never both; a service port is a number or a name, never both. An object
 * a rule rejects is skipped whole. Also the MeshConfig ingress fields (`readMeshIngress`).
 */
import type { Origin } from '../../model/diagnostics.js';
import {
  DEFAULT_MESH_INGRESS,
  INGRESS_CLASS_ANNOTATION,
  type Ingress,
  type IngressBackend,
  type IngressClass,
  type IngressControllerMode,
  type IngressPath,
  type IngressPathType,
  type IngressRule,
  type IngressTls,
  type MeshIngressSettings,
} from '../../model/ingress.js';
import { INPUT_LIMITS, TOO_LARGE } from '../limits.js';
import { isDns1123Label, isDns1123Subdomain, readCreationTimestamp, readMeta } from './meta.js';
import { fields, get, int, list, requiredStr, str, type Raw, type Reader } from './reader.js';

const PATH_TYPES: readonly IngressPathType[] = ['Exact', 'Prefix', 'ImplementationSpecific'];
/** Bounds (README "Limits"): rules and TLS entries as hosts, paths per Ingress as HTTP routes. */
const MAX_RULES = INPUT_LIMITS.maxHosts;
const MAX_TLS = INPUT_LIMITS.maxHosts;
const MAX_PATHS = INPUT_LIMITS.maxHttpRoutes;
const MAX_PATH_CHARS = 4096;

const WILDCARD_SUBDOMAIN = (h: string): boolean => h.startsWith('*.') && isDns1123Subdomain(h.slice(2));
const isIp = (h: string): boolean => /^[0-9.]+$/.test(h) || h.includes(':');

function host(r: Reader, v: unknown, path: string): string | undefined {
  const h = str(r, v, path);
  if (h === undefined || h === '') return h;
  if (isIp(h)) r.error(path, `"${h.slice(0, 80)}" is an IP address; hosts must be DNS names`);
  else if (!isDns1123Subdomain(h) && !WILDCARD_SUBDOMAIN(h))
    r.error(path, `"${h.slice(0, 80)}" is not a DNS-1123 subdomain (a leading "*." is allowed)`);
  return h;
}

function backend(r: Reader, v: unknown, path: string): IngressBackend | undefined {
  const o = fields(r, v, path, ['service', 'resource']);
  if (!o) {
    if (v === undefined || v === null) r.error(path, 'is required', 'missing-field');
    return undefined;
  }
  const hasResource = get(o, 'resource') !== undefined && get(o, 'resource') !== null;
  const s = fields(r, get(o, 'service'), `${path}.service`, ['name', 'port']);
  if (s && hasResource) {
    r.error(path, 'cannot set both service and resource', 'conflicting-fields');
    return undefined;
  }
  if (!s) {
    if (!hasResource) r.error(path, 'one of service or resource is required', 'missing-field');
    return {};
  }
  const name = requiredStr(r, get(s, 'name'), `${path}.service.name`);
  if (name !== undefined && !isDns1123Label(name))
    r.error(`${path}.service.name`, `"${name.slice(0, 80)}" is not a Service name`);
  const before = r.errorCount;
  const p = fields(r, get(s, 'port'), `${path}.service.port`, ['name', 'number']);
  const number = p ? int(r, get(p, 'number'), `${path}.service.port.number`, 1, 65535) : undefined;
  const portName = p ? str(r, get(p, 'name'), `${path}.service.port.name`) : undefined;
  if (number !== undefined && portName !== undefined && portName !== '') {
    r.error(`${path}.service.port`, 'cannot set both name and number', 'conflicting-fields');
    return undefined;
  }
  if (number === undefined && (portName === undefined || portName === '')) {
    if (r.errorCount > before) return undefined;
    r.error(`${path}.service.port`, 'a port name or number is required', 'missing-field');
    return undefined;
  }
  if (portName !== undefined && portName.length > 63)
    r.error(`${path}.service.port.name`, 'is longer than 63 characters');
  if (name === undefined) return undefined;
  return { service: { name, port: number !== undefined ? { number } : { name: portName as string } } };
}

function ingressPath(r: Reader, v: unknown, at: string): IngressPath | undefined {
  const o = fields(r, v, at, ['path', 'pathType', 'backend']);
  if (!o) return undefined;
  const path = str(r, get(o, 'path'), `${at}.path`) ?? '';
  const rawType = str(r, get(o, 'pathType'), `${at}.pathType`);
  let pathType: IngressPathType | undefined;
  if (rawType !== undefined) {
    if ((PATH_TYPES as readonly string[]).includes(rawType)) pathType = rawType as IngressPathType;
    else r.error(`${at}.pathType`, `must be one of ${PATH_TYPES.join(', ')}, got "${rawType.slice(0, 40)}"`);
  }
  if (path.length > MAX_PATH_CHARS) r.error(`${at}.path`, `is longer than ${MAX_PATH_CHARS} characters`, TOO_LARGE);
  else if (path !== '' && !path.startsWith('/')) r.error(`${at}.path`, 'must be an absolute path');
  else if ((pathType === 'Exact' || pathType === 'Prefix') && path === '')
    r.error(`${at}.path`, `must be an absolute path with pathType ${pathType}`);
  else if ((pathType === 'Exact' || pathType === 'Prefix') && /\/\/|\/\.\.?(\/|$)|%2f/i.test(path))
    r.error(`${at}.path`, `must not contain "//", "/./", "/../" or "%2f" with pathType ${pathType}`);
  const b = backend(r, get(o, 'backend'), `${at}.backend`);
  if (!b) return undefined;
  return { path, ...(pathType ? { pathType } : {}), backend: b };
}

function rule(r: Reader, v: unknown, at: string): IngressRule | undefined {
  const o = fields(r, v, at, ['host', 'http']);
  if (!o) return undefined;
  const h = host(r, get(o, 'host'), `${at}.host`) ?? '';
  const http = fields(r, get(o, 'http'), `${at}.http`, ['paths']);
  if (!http) return { host: h };
  const paths = list(r, get(http, 'paths'), `${at}.http.paths`, (p, pp) => ingressPath(r, p, pp), MAX_PATHS);
  const rawPaths = get(http, 'paths');
  if (rawPaths === undefined || rawPaths === null) r.error(`${at}.http.paths`, 'is required', 'missing-field');
  return { host: h, paths: paths ?? [] };
}

function tls(r: Reader, v: unknown, at: string): IngressTls | undefined {
  const o = fields(r, v, at, ['hosts', 'secretName']);
  if (!o) return undefined;
  const hosts = list(r, get(o, 'hosts'), `${at}.hosts`, (h, p) => host(r, h, p), INPUT_LIMITS.maxHosts);
  const secretName = str(r, get(o, 'secretName'), `${at}.secretName`);
  if (secretName !== undefined && secretName !== '' && !isDns1123Subdomain(secretName))
    r.error(`${at}.secretName`, `"${secretName.slice(0, 80)}" is not a Secret name`);
  return { ...(hosts?.length ? { hosts } : {}), ...(secretName ? { secretName } : {}) };
}

export function readIngress(r: Reader, raw: Raw, origin: Origin, apiVersion: string): Ingress | undefined {
  const meta = readMeta(r, raw, true, 'subdomain');
  const created = readCreationTimestamp(r, raw);
  fields(r, raw, '', ['apiVersion', 'kind', 'metadata', 'spec', 'status']);
  const spec = fields(r, get(raw, 'spec'), 'spec', ['ingressClassName', 'defaultBackend', 'rules', 'tls']);
  if (!spec) {
    r.error('spec', 'is required', 'missing-field');
    return undefined;
  }
  const className = str(r, get(spec, 'ingressClassName'), 'spec.ingressClassName');
  if (className !== undefined && className !== '' && !isDns1123Subdomain(className))
    r.error('spec.ingressClassName', `"${className.slice(0, 80)}" is not an IngressClass name`);
  const hasDefault = get(spec, 'defaultBackend') !== undefined && get(spec, 'defaultBackend') !== null;
  if (hasDefault) backend(r, get(spec, 'defaultBackend'), 'spec.defaultBackend');
  const rules = list(r, get(spec, 'rules'), 'spec.rules', (v, p) => rule(r, v, p), MAX_RULES) ?? [];
  const tlsList = list(r, get(spec, 'tls'), 'spec.tls', (v, p) => tls(r, v, p), MAX_TLS) ?? [];
  const pathCount = rules.reduce((n, x) => n + (x.paths?.length ?? 0), 0);
  if (pathCount > MAX_PATHS)
    r.error('spec.rules', `has ${pathCount} paths in all; at most ${MAX_PATHS} are accepted`, TOO_LARGE);
  if (!hasDefault && get(spec, 'rules') === undefined)
    r.error('spec', 'either `defaultBackend` or `rules` must be specified', 'missing-field');
  if (!meta || r.failed) return undefined;
  if (hasDefault)
    r.warn(
      'spec.defaultBackend',
      'the default backend is not served: istiod ignores it ("use VirtualService"), and so does meshsnap',
      'unsupported-field',
    );
  const annotation = meta.annotations[INGRESS_CLASS_ANNOTATION];
  return {
    kind: 'Ingress',
    apiVersion,
    // Only the class annotation: the one the conversion reads.
    meta: { ...meta, annotations: annotation === undefined ? {} : { [INGRESS_CLASS_ANNOTATION]: annotation } },
    ...(created ? { creationTimestamp: created } : {}),
    origin,
    spec: {
      ...(className ? { ingressClassName: className } : {}),
      ...(hasDefault ? { hasDefaultBackend: true as const } : {}),
      rules,
      tls: tlsList,
    },
  };
}

export function readIngressClass(r: Reader, raw: Raw, origin: Origin, apiVersion: string): IngressClass | undefined {
  const meta = readMeta(r, raw, false, 'subdomain');
  fields(r, raw, '', ['apiVersion', 'kind', 'metadata', 'spec']);
  const spec = fields(r, get(raw, 'spec'), 'spec', ['controller', 'parameters']);
  const controller = spec ? str(r, get(spec, 'controller'), 'spec.controller') : undefined;
  if (controller !== undefined && controller.length > 250) r.error('spec.controller', 'is longer than 250 characters');
  if (!meta || r.failed) return undefined;
  return {
    kind: 'IngressClass',
    apiVersion,
    meta: { ...meta, labels: {}, annotations: {} },
    origin,
    spec: { controller: controller ?? '' },
  };
}

/** The MeshConfig fields the Ingress conversion reads. */
export const MESH_INGRESS_FIELDS = ['ingressClass', 'ingressControllerMode', 'ingressSelector', 'ingressService'];
const MODES: readonly IngressControllerMode[] = ['UNSPECIFIED', 'OFF', 'DEFAULT', 'STRICT'];

/**
 * `ingressClass`, `ingressControllerMode` (OFF | DEFAULT | STRICT), `ingressSelector`,
 * `ingressService`: absent where unset or equal to istiod's default, so meshes that leave them
 * alone keep their digests.
 */
export function readMeshIngress(r: Reader, o: Raw, at: (k: string) => string): { ingress?: MeshIngressSettings } {
  const out: Record<string, string> = {};
  for (const key of ['ingressClass', 'ingressSelector', 'ingressService'] as const) {
    const v = str(r, get(o, key), at(key));
    if (v !== undefined && v.length > 253) r.error(at(key), 'is longer than 253 characters');
    else if (v !== undefined && v !== DEFAULT_MESH_INGRESS[key]) out[key] = v;
  }
  const mode = str(r, get(o, 'ingressControllerMode'), at('ingressControllerMode'));
  if (mode !== undefined) {
    if (!(MODES as readonly string[]).includes(mode))
      r.error(at('ingressControllerMode'), `must be one of OFF, DEFAULT, STRICT, got "${mode.slice(0, 40)}"`);
    else if (mode !== DEFAULT_MESH_INGRESS.ingressControllerMode) {
      out.ingressControllerMode = mode;
      if (mode === 'UNSPECIFIED')
        r.warn(
          at('ingressControllerMode'),
          'UNSPECIFIED is not a mode istiod processes Ingresses in: no Ingress is served',
          'ignored-field',
        );
    }
  }
  return Object.keys(out).length ? { ingress: out as MeshIngressSettings } : {};
}

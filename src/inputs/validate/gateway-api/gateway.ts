/**
 * GatewayClass and Gateway (gateway.networking.k8s.io v1/v1beta1) → model/gateway-api.ts, with the
 * CRD's schema and CEL rules (apis/v1/gateway_types.go, gatewayclass_types.go). An object any rule
 * rejects is skipped whole, as the API server would refuse it.
 */
import type { Origin } from '../../../model/diagnostics.js';
import {
  GATEWAY_API_GROUP,
  type AllowedRoutes,
  type CaCertificateReference,
  type FrontendTlsConfig,
  type FrontendValidationMode,
  type GatewayAddress,
  type GatewayFrontendTls,
  type GatewayClass,
  type KubernetesGateway,
  type LabelSelector,
  type LabelSelectorRequirement,
  type Listener,
  type ListenerTls,
  type RouteGroupKind,
  type SecretObjectReference,
} from '../../../model/gateway-api.js';
import { fields, get, int, list, requiredStr, str, strList, strMap, type Raw, type Reader } from '../reader.js';
import { cipherSuites } from '../gateway.js';
import { hostname, objectName, readGatewayApiMeta, readSpec, sectionName } from './common.js';

const CONTROLLER_NAME =
  /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$/;

export function readGatewayClass(r: Reader, raw: Raw, origin: Origin, apiVersion: string): GatewayClass | undefined {
  const meta = readGatewayApiMeta(r, raw, false);
  const spec = readSpec(r, raw, ['controllerName', 'description', 'parametersRef']);
  const controllerName = spec ? requiredStr(r, get(spec, 'controllerName'), 'spec.controllerName') : undefined;
  if (controllerName !== undefined && (controllerName.length > 253 || !CONTROLLER_NAME.test(controllerName)))
    r.error('spec.controllerName', `"${controllerName.slice(0, 80)}" is not a domain-prefixed path`);
  const description = spec ? str(r, get(spec, 'description'), 'spec.description') : undefined;
  if (spec && parametersRef(r, get(spec, 'parametersRef'), 'spec.parametersRef'))
    // istiod reads no GatewayClass parameters (a class's defaults come from a ConfigMap labelled
    // gateway.istio.io/defaults-for-class) and accepts the class regardless.
    r.warn(
      'spec.parametersRef',
      'spec.parametersRef is not read by istiod (nor meshsnap): ignored, the class is accepted regardless',
      'unsupported-field',
    );
  if (!meta || !spec || controllerName === undefined || r.failed) return undefined;
  return {
    kind: 'GatewayClass',
    apiVersion,
    meta,
    origin,
    spec: { controllerName, ...(description !== undefined ? { description } : {}) },
  };
}

/** A ParametersReference (group, kind, name required; namespace for cluster-scoped kinds). */
function parametersRef(r: Reader, v: unknown, path: string): Raw | undefined {
  const o = fields(r, v, path, ['group', 'kind', 'name', 'namespace']);
  if (!o) return undefined;
  for (const f of ['group', 'kind', 'name'] as const)
    if (get(o, f) == null) r.error(`${path}.${f}`, 'is required', 'missing-field');
    else str(r, get(o, f), `${path}.${f}`);
  str(r, get(o, 'namespace'), `${path}.namespace`);
  return o;
}

/** Gateway fields meshsnap does not apply yet: a warning each (`tls` is read, its `backend` warned about). */
const UNSUPPORTED_GATEWAY_FIELDS = ['infrastructure', 'allowedListeners'] as const;

const PROTOCOL =
  /^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?$|[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[A-Za-z0-9]+$/;

export function readKubernetesGateway(
  r: Reader,
  raw: Raw,
  origin: Origin,
  apiVersion: string,
): KubernetesGateway | undefined {
  const meta = readGatewayApiMeta(r, raw, true);
  const spec = readSpec(r, raw, ['gatewayClassName', 'listeners', 'addresses', 'tls', ...UNSUPPORTED_GATEWAY_FIELDS]);
  if (!spec) return undefined;
  for (const f of UNSUPPORTED_GATEWAY_FIELDS)
    if (get(spec, f) != null)
      r.warn(`spec.${f}`, `spec.${f} is not supported by meshsnap yet; ignored`, 'unsupported-field');
  const gatewayClassName = objectName(r, get(spec, 'gatewayClassName'), 'spec.gatewayClassName');
  const listeners = list(r, get(spec, 'listeners'), 'spec.listeners', (v, p) => listener(r, v, p), 64) ?? [];
  if (listeners.length === 0 && !r.failed)
    r.error('spec.listeners', 'must have at least one listener', 'missing-field');
  checkListenerRules(r, listeners);
  const addresses = list(r, get(spec, 'addresses'), 'spec.addresses', (v, p) => address(r, v, p), 16) ?? [];
  const seen = new Set<string>();
  addresses.forEach((a, i) => {
    const key = `${a.type}|${a.value}`;
    if ((a.type === 'IPAddress' || a.type === 'Hostname') && seen.has(key))
      r.error(`spec.addresses[${i}].value`, `${a.type} values must be unique`);
    seen.add(key);
  });
  const frontendTls = gatewayTls(r, get(spec, 'tls'), 'spec.tls');
  if (!meta || gatewayClassName === undefined || r.failed) return undefined;
  return {
    kind: 'KubernetesGateway',
    apiVersion,
    meta,
    origin,
    spec: { gatewayClassName, listeners, addresses, ...(frontendTls ? { frontendTls } : {}) },
  };
}

/**
 * Gateway `spec.tls` (GatewayTLSConfig): `frontend` (client certificate validation, per port or the
 * default) is applied as istiod's buildTLS; `backend.clientCertificateRef` is warned about: istiod's
 * Envoy gateways do not send it either, istiod only checks it (validateBackendClientCertificateRef)
 * for the Gateway's ResolvedRefs condition.
 */
function gatewayTls(r: Reader, v: unknown, path: string): GatewayFrontendTls | undefined {
  const o = fields(r, v, path, ['frontend', 'backend']);
  if (!o) return undefined;
  if (get(o, 'backend') != null)
    r.warn(
      `${path}.backend`,
      'backend.clientCertificateRef is not applied: istiod (Envoy gateways) does not present it to backends either, it only checks the reference for the ResolvedRefs status, which meshsnap does not',
      'unsupported-field',
    );
  const f = fields(r, get(o, 'frontend'), `${path}.frontend`, ['default', 'perPort']);
  if (!f) return undefined;
  if (get(f, 'default') == null) r.error(`${path}.frontend.default`, 'is required', 'missing-field');
  const def = frontendTlsConfig(r, get(f, 'default'), `${path}.frontend.default`);
  const perPort =
    list(
      r,
      get(f, 'perPort'),
      `${path}.frontend.perPort`,
      (item, p) => {
        const e = fields(r, item, p, ['port', 'tls']);
        if (!e) return undefined;
        const port = int(r, get(e, 'port'), `${p}.port`, 1, 65535);
        if (get(e, 'port') == null) r.error(`${p}.port`, 'is required', 'missing-field');
        if (get(e, 'tls') == null) r.error(`${p}.tls`, 'is required', 'missing-field');
        const tls = frontendTlsConfig(r, get(e, 'tls'), `${p}.tls`);
        return port === undefined || !tls ? undefined : { port, tls };
      },
      64,
    ) ?? [];
  const ports = new Set<number>();
  perPort.forEach((e, i) => {
    if (ports.has(e.port))
      r.error(`${path}.frontend.perPort[${i}].port`, 'Port for TLS configuration must be unique within the Gateway');
    ports.add(e.port);
  });
  return def ? { default: def, perPort } : undefined;
}

const VALIDATION_MODES = ['AllowValidOnly', 'AllowInsecureFallback'] as const;

function frontendTlsConfig(r: Reader, v: unknown, path: string): FrontendTlsConfig | undefined {
  const o = fields(r, v, path, ['validation']);
  if (!o) return v == null ? undefined : {};
  const val = fields(r, get(o, 'validation'), `${path}.validation`, ['caCertificateRefs', 'mode']);
  if (!val) return {};
  const vp = `${path}.validation`;
  const mode = str(r, get(val, 'mode'), `${vp}.mode`) ?? 'AllowValidOnly';
  if (!(VALIDATION_MODES as readonly string[]).includes(mode))
    r.error(`${vp}.mode`, `"${mode.slice(0, 40)}" must be one of ${VALIDATION_MODES.join(', ')}`);
  if (get(val, 'caCertificateRefs') == null) r.error(`${vp}.caCertificateRefs`, 'is required', 'missing-field');
  const refs =
    list(r, get(val, 'caCertificateRefs'), `${vp}.caCertificateRefs`, (item, p) => caRef(r, item, p), 16) ?? [];
  if (get(val, 'caCertificateRefs') != null && refs.length === 0 && !r.failed)
    r.error(`${vp}.caCertificateRefs`, 'must have at least 1 item');
  return { validation: { caCertificateRefs: refs, mode: mode as FrontendValidationMode } };
}

function caRef(r: Reader, v: unknown, p: string): CaCertificateReference | undefined {
  const o = fields(r, v, p, ['group', 'kind', 'name', 'namespace']);
  if (!o) return undefined;
  for (const f of ['group', 'kind', 'name'] as const)
    if (get(o, f) == null) r.error(`${p}.${f}`, 'is required', 'missing-field');
  const group = str(r, get(o, 'group'), `${p}.group`);
  const kind = str(r, get(o, 'kind'), `${p}.kind`);
  const name = objectName(r, get(o, 'name'), `${p}.name`);
  const namespace = str(r, get(o, 'namespace'), `${p}.namespace`);
  if (group === undefined || kind === undefined || name === undefined) return undefined;
  if (group === '' && kind === 'ConfigMap')
    // Compiled as istiod does (configmap://<ns>/<name>-cacert), but istiod serves that SDS name itself.
    r.warn(
      p,
      'a ConfigMap CA bundle is not served by the meshsnap relay (only Secrets): the listener requires client certificates it has no CA to validate, so TLS handshakes on it fail; use a Secret (ca.crt)',
      'unsupported-field',
    );
  return { group, kind, name, ...(namespace !== undefined ? { namespace } : {}) };
}

function listener(r: Reader, v: unknown, path: string): Listener | undefined {
  const o = fields(r, v, path, ['name', 'hostname', 'port', 'protocol', 'tls', 'allowedRoutes']);
  if (!o) return undefined;
  const name = sectionName(r, get(o, 'name'), `${path}.name`);
  if (name === undefined && get(o, 'name') == null) r.error(`${path}.name`, 'is required', 'missing-field');
  const host = hostname(r, get(o, 'hostname'), `${path}.hostname`);
  const port = int(r, get(o, 'port'), `${path}.port`, 1, 65535);
  if (get(o, 'port') == null) r.error(`${path}.port`, 'is required', 'missing-field');
  const protocol = requiredStr(r, get(o, 'protocol'), `${path}.protocol`);
  if (protocol !== undefined && (protocol.length > 255 || !PROTOCOL.test(protocol)))
    r.error(`${path}.protocol`, `"${protocol.slice(0, 60)}" is not a valid protocol`);
  const tls = listenerTls(r, get(o, 'tls'), `${path}.tls`);
  const allowedRoutes = readAllowedRoutes(r, get(o, 'allowedRoutes'), `${path}.allowedRoutes`);
  if (name === undefined || port === undefined || protocol === undefined) return undefined;
  return {
    name,
    ...(host !== undefined ? { hostname: host } : {}),
    port,
    protocol,
    ...(tls ? { tls } : {}),
    allowedRoutes,
  };
}

/** The CEL rules on `spec.listeners`. */
function checkListenerRules(r: Reader, listeners: readonly Listener[]): void {
  const names = new Set<string>();
  const combos = new Set<string>();
  listeners.forEach((l, i) => {
    const p = `spec.listeners[${i}]`;
    if (['HTTP', 'TCP', 'UDP'].includes(l.protocol) && l.tls)
      r.error(`${p}.tls`, "tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']");
    if (l.protocol === 'HTTPS' && l.tls && l.tls.mode !== 'Terminate')
      r.error(`${p}.tls.mode`, 'tls mode must be Terminate for protocol HTTPS');
    if (l.protocol === 'TLS' && !l.tls) r.error(`${p}.tls`, 'tls mode must be set for protocol TLS', 'missing-field');
    if ((l.protocol === 'TCP' || l.protocol === 'UDP') && l.hostname !== undefined)
      r.error(`${p}.hostname`, "hostname must not be specified for protocols ['TCP', 'UDP']");
    if (names.has(l.name)) r.error(`${p}.name`, 'Listener name must be unique within the Gateway');
    names.add(l.name);
    const combo = `${l.port}|${l.protocol}|${l.hostname ?? ''}`;
    if (combos.has(combo)) r.error(p, 'Combination of port, protocol and hostname must be unique for each listener');
    combos.add(combo);
  });
}

function listenerTls(r: Reader, v: unknown, path: string): ListenerTls | undefined {
  const o = fields(r, v, path, ['mode', 'certificateRefs', 'options', 'frontendValidation']);
  if (!o) return undefined;
  const mode = str(r, get(o, 'mode'), `${path}.mode`) ?? 'Terminate';
  if (mode !== 'Terminate' && mode !== 'Passthrough') {
    r.error(`${path}.mode`, `"${mode.slice(0, 40)}" must be Terminate or Passthrough`);
    return undefined;
  }
  const certificateRefs =
    list(r, get(o, 'certificateRefs'), `${path}.certificateRefs`, (item, p) => secretRef(r, item, p), 64) ?? [];
  const options = strMap(r, get(o, 'options'), `${path}.options`) ?? {};
  if (Object.keys(options).length > 16) r.error(`${path}.options`, 'at most 16 options');
  if (mode === 'Terminate' && certificateRefs.length === 0 && Object.keys(options).length === 0)
    r.error(path, 'certificateRefs or options must be specified when mode is Terminate', 'missing-field');
  if (get(o, 'frontendValidation') != null)
    // The experimental channel's listener-level field (before v1.3); istiod reads client
    // certificate validation only from the Gateway's spec.tls, and neither from here.
    r.warn(
      `${path}.frontendValidation`,
      'frontendValidation is not applied (istiod does not read it): client certificates are not validated by it',
      'unsupported-field',
    );
  const suites = tlsOptions(r, mode, options, `${path}.options`);
  return { mode, certificateRefs, options, ...(suites ? { cipherSuites: suites } : {}) };
}

/** The listener TLS options istiod reads (conversion.go buildTLS); the others it ignores, said so here. */
const TLS_TERMINATE_MODE = 'gateway.istio.io/tls-terminate-mode';
const TLS_CIPHER_SUITES = 'gateway.istio.io/tls-cipher-suites';
const TERMINATE_MODES = ['MUTUAL', 'OPTIONAL_MUTUAL', 'ISTIO_SIMPLE', 'ISTIO_MUTUAL'];

/** Warns about options istiod ignores; the cipher suites option as istiod's FilterCipherSuites keeps it. */
function tlsOptions(
  r: Reader,
  mode: ListenerTls['mode'],
  options: Readonly<Record<string, string>>,
  path: string,
): string[] | undefined {
  for (const [key, value] of Object.entries(options)) {
    if (key === TLS_TERMINATE_MODE) {
      if (mode === 'Passthrough')
        r.warn(`${path}.${key}`, 'ignored with mode Passthrough (as istiod)', 'ignored-field');
      else if (!TERMINATE_MODES.includes(value))
        r.warn(
          `${path}.${key}`,
          `"${value.slice(0, 40)}" is not one of ${TERMINATE_MODES.join(', ')}: ignored, the listener terminates TLS in SIMPLE mode (as istiod)`,
          'ignored-field',
        );
    } else if (key !== TLS_CIPHER_SUITES)
      r.warn(
        `${path}.${key}`,
        `option "${key.slice(0, 80)}" is not read by istiod (it reads ${TLS_TERMINATE_MODE} and ${TLS_CIPHER_SUITES}): ignored`,
        'ignored-field',
      );
  }
  const raw = options[TLS_CIPHER_SUITES];
  if (raw === undefined || raw === '') return undefined;
  const builtin = mode === 'Terminate' ? options[TLS_TERMINATE_MODE] : undefined;
  if (builtin === 'ISTIO_SIMPLE' || builtin === 'ISTIO_MUTUAL') {
    // buildTLS returns before it reads the cipher suites for the built-in certificate modes.
    r.warn(
      `${path}.${TLS_CIPHER_SUITES}`,
      `ignored with ${TLS_TERMINATE_MODE} ${builtin} (as istiod)`,
      'ignored-field',
    );
    return undefined;
  }
  // strings.Split(opts, ",") and TrimSpace; an empty entry (istiod passes it on to Envoy) is dropped.
  const list = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  return cipherSuites(r, list.slice(0, 64), `${path}.${TLS_CIPHER_SUITES}`);
}

function secretRef(r: Reader, v: unknown, p: string): SecretObjectReference | undefined {
  const o = fields(r, v, p, ['group', 'kind', 'name', 'namespace']);
  if (!o) return undefined;
  const name = objectName(r, get(o, 'name'), `${p}.name`);
  const namespace = str(r, get(o, 'namespace'), `${p}.namespace`);
  if (name === undefined) return undefined;
  return {
    group: str(r, get(o, 'group'), `${p}.group`) ?? '',
    kind: str(r, get(o, 'kind'), `${p}.kind`) ?? 'Secret',
    name,
    ...(namespace !== undefined ? { namespace } : {}),
  };
}

function readAllowedRoutes(r: Reader, v: unknown, path: string): AllowedRoutes {
  const o = fields(r, v, path, ['namespaces', 'kinds']);
  const ns = o ? fields(r, get(o, 'namespaces'), `${path}.namespaces`, ['from', 'selector']) : undefined;
  const from = (ns ? str(r, get(ns, 'from'), `${path}.namespaces.from`) : undefined) ?? 'Same';
  if (from !== 'All' && from !== 'Same' && from !== 'Selector')
    r.error(`${path}.namespaces.from`, `"${from.slice(0, 40)}" must be All, Selector or Same`);
  const selector = ns ? labelSelector(r, get(ns, 'selector'), `${path}.namespaces.selector`) : undefined;
  if (from === 'Selector' && !selector)
    r.error(`${path}.namespaces.selector`, 'is required when from is Selector', 'missing-field');
  const kinds = o
    ? list(
        r,
        get(o, 'kinds'),
        `${path}.kinds`,
        (item, p): RouteGroupKind | undefined => {
          const k = fields(r, item, p, ['group', 'kind']);
          if (!k) return undefined;
          const kind = requiredStr(r, get(k, 'kind'), `${p}.kind`);
          const group = str(r, get(k, 'group'), `${p}.group`) ?? GATEWAY_API_GROUP;
          return kind === undefined ? undefined : { group, kind };
        },
        8,
      )
    : undefined;
  return {
    namespaces: { from: from as AllowedRoutes['namespaces']['from'], ...(selector ? { selector } : {}) },
    ...(kinds !== undefined ? { kinds } : {}),
  };
}

const OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'] as const;

export function labelSelector(r: Reader, v: unknown, path: string): LabelSelector | undefined {
  const o = fields(r, v, path, ['matchLabels', 'matchExpressions']);
  if (!o) return undefined;
  const matchLabels = strMap(r, get(o, 'matchLabels'), `${path}.matchLabels`);
  const matchExpressions = list(r, get(o, 'matchExpressions'), `${path}.matchExpressions`, (item, p) => {
    const e = fields(r, item, p, ['key', 'operator', 'values']);
    if (!e) return undefined;
    const key = requiredStr(r, get(e, 'key'), `${p}.key`);
    const operator = requiredStr(r, get(e, 'operator'), `${p}.operator`);
    const values = strList(r, get(e, 'values'), `${p}.values`) ?? [];
    if (operator !== undefined && !(OPERATORS as readonly string[]).includes(operator)) {
      r.error(`${p}.operator`, `"${operator.slice(0, 40)}" must be one of ${OPERATORS.join(', ')}`);
      return undefined;
    }
    if ((operator === 'In' || operator === 'NotIn') && values.length === 0)
      r.error(`${p}.values`, `must be non-empty for operator ${operator}`, 'missing-field');
    if ((operator === 'Exists' || operator === 'DoesNotExist') && values.length > 0)
      r.error(`${p}.values`, `must be empty for operator ${operator}`);
    if (key === undefined || operator === undefined) return undefined;
    return { key, operator, values } as LabelSelectorRequirement;
  });
  return {
    ...(matchLabels ? { matchLabels } : {}),
    ...(matchExpressions ? { matchExpressions } : {}),
  };
}

function address(r: Reader, v: unknown, p: string): GatewayAddress | undefined {
  const o = fields(r, v, p, ['type', 'value']);
  if (!o) return undefined;
  const type = str(r, get(o, 'type'), `${p}.type`) ?? 'IPAddress';
  const value = str(r, get(o, 'value'), `${p}.value`) ?? '';
  if (value.length > 253) r.error(`${p}.value`, 'must be at most 253 characters');
  if (
    type === 'Hostname' &&
    value !== '' &&
    !/^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(value)
  )
    r.error(`${p}.value`, `"${value.slice(0, 80)}" is not a valid hostname`);
  return { type, value };
}

/**
 * AuthorizationPolicy (security.istio.io v1/v1beta1) → model/authorization-policy.ts. Structural
 * checks and the webhook's semantic ones that would otherwise silently change what is enforced
 * (action/provider, selector vs targetRef, empty sources, unknown `when` keys, ports, IP blocks,
 * the dry-run annotation). One invalid part invalidates the whole policy.
 */
import { workloadSelector } from './common-istio.js';
import type { Origin } from '../../model/diagnostics.js';
import {
  DRY_RUN_ANNOTATION,
  type AuthorizationAction,
  type AuthorizationPolicy,
  type AuthzCondition,
  type AuthzOperation,
  type AuthzRule,
  type AuthzSource,
  type PolicyTargetReference,
} from '../../model/authorization-policy.js';
import { readMeta } from './meta.js';
import { compact, fields, get, list, requiredStr, str, strList, type Raw, type Reader } from './reader.js';

const ACTIONS: readonly AuthorizationAction[] = ['ALLOW', 'DENY', 'AUDIT', 'CUSTOM'];

const SOURCE_FIELDS = [
  'principals',
  'requestPrincipals',
  'namespaces',
  'serviceAccounts',
  'trustDomains',
  'ipBlocks',
  'remoteIpBlocks',
] as const;
const OPERATION_FIELDS = ['hosts', 'ports', 'methods', 'paths'] as const;
const not = (f: string): string => `not${f[0]?.toUpperCase()}${f.slice(1)}`;

const EXACT_KEYS = new Set([
  'source.ip',
  'remote.ip',
  'source.namespace',
  'source.serviceAccount',
  'source.trustDomain',
  'source.principal',
  'request.auth.principal',
  'request.auth.audiences',
  'request.auth.presenter',
  'destination.ip',
  'destination.port',
  'connection.sni',
]);
const BRACKETED_KEYS = ['request.headers[', 'request.auth.claims[', 'experimental.envoy.filters.'];
const IP_KEYS = new Set(['source.ip', 'remote.ip', 'destination.ip']);

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const IPV6 = /^[0-9a-fA-F:.]*:[0-9a-fA-F:.]*$/;

/** `1.2.3.4`, `1.2.0.0/16`, IPv6 alike. */
export function isIpOrCidr(value: string): boolean {
  const [address = '', len, extra] = value.split('/');
  if (extra !== undefined) return false;
  const bits = IPV4.test(address) ? 32 : IPV6.test(address) ? 128 : 0;
  if (bits === 0) return false;
  return len === undefined || (/^\d+$/.test(len) && Number(len) <= bits);
}

const isPort = (v: string): boolean => /^\d+$/.test(v) && Number(v) <= 65535;

function valuesOf(r: Reader, o: Raw, path: string, names: readonly string[]): Record<string, string[] | undefined> {
  const out: Record<string, string[] | undefined> = {};
  for (const name of names) {
    for (const key of [name, not(name)]) {
      const values = strList(r, get(o, key), `${path}.${key}`);
      values?.forEach((v, i) => v === '' && r.error(`${path}.${key}[${i}]`, 'must not be empty'));
      out[key] = values;
    }
  }
  return out;
}

function source(r: Reader, v: unknown, path: string): AuthzSource | undefined {
  const names = SOURCE_FIELDS.flatMap((f) => [f, not(f)]);
  const o = fields(r, v, path, names);
  if (!o || Object.keys(o).filter((k) => names.includes(k)).length === 0) {
    r.error(path, 'must set at least one field', 'missing-field');
    return undefined;
  }
  const s = valuesOf(r, o, path, SOURCE_FIELDS);
  for (const key of ['ipBlocks', 'notIpBlocks', 'remoteIpBlocks', 'notRemoteIpBlocks']) {
    s[key]?.forEach(
      (ip, i) =>
        !isIpOrCidr(ip) && r.error(`${path}.${key}[${i}]`, `"${ip.slice(0, 60)}" is not an IP address or CIDR`),
    );
  }
  return compact(s) as AuthzSource;
}

function operation(r: Reader, v: unknown, path: string): AuthzOperation | undefined {
  const names = OPERATION_FIELDS.flatMap((f) => [f, not(f)]);
  const o = fields(r, v, path, names);
  if (!o || Object.keys(o).filter((k) => names.includes(k)).length === 0) {
    r.error(path, 'must set at least one field', 'missing-field');
    return undefined;
  }
  const op = valuesOf(r, o, path, OPERATION_FIELDS);
  for (const key of ['ports', 'notPorts'])
    op[key]?.forEach(
      (p, i) => !isPort(p) && r.error(`${path}.${key}[${i}]`, `"${p.slice(0, 20)}" is not a port (0-65535)`),
    );
  return compact(op) as AuthzOperation;
}

function condition(r: Reader, v: unknown, path: string): AuthzCondition | undefined {
  const o = fields(r, v, path, ['key', 'values', 'notValues']);
  if (!o) return undefined;
  const key = requiredStr(r, get(o, 'key'), `${path}.key`);
  const values = strList(r, get(o, 'values'), `${path}.values`);
  const notValues = strList(r, get(o, 'notValues'), `${path}.notValues`);
  if (key === undefined) return undefined;
  const known = EXACT_KEYS.has(key) || (BRACKETED_KEYS.some((p) => key.startsWith(p)) && key.endsWith(']'));
  if (!known) r.error(`${path}.key`, `unknown attribute "${key.slice(0, 80)}"`, 'unknown-attribute');
  if (!values?.length && !notValues?.length) r.error(path, 'needs values or notValues', 'missing-field');
  const check = (ok: (s: string) => boolean, what: string) =>
    (['values', 'notValues'] as const).forEach((f) =>
      (f === 'values' ? values : notValues)?.forEach(
        (s, i) => !ok(s) && r.error(`${path}.${f}[${i}]`, `"${s.slice(0, 60)}" is not ${what}`),
      ),
    );
  if (IP_KEYS.has(key)) check(isIpOrCidr, 'an IP address or CIDR');
  if (key === 'destination.port') check(isPort, 'a port (0-65535)');
  return compact({ key, values, notValues });
}

function rule(r: Reader, v: unknown, path: string): AuthzRule | null | undefined {
  if (v === null) return null;
  const o = fields(r, v, path, ['from', 'to', 'when']);
  if (!o) return undefined;
  const from = list(r, get(o, 'from'), `${path}.from`, (item, p) => {
    const f = fields(r, item, p, ['source']);
    const s = f ? source(r, get(f, 'source'), `${p}.source`) : undefined;
    return s && { source: s };
  });
  const to = list(r, get(o, 'to'), `${path}.to`, (item, p) => {
    const t = fields(r, item, p, ['operation']);
    const op = t ? operation(r, get(t, 'operation'), `${p}.operation`) : undefined;
    return op && { operation: op };
  });
  const when = list(r, get(o, 'when'), `${path}.when`, (item, p) => condition(r, item, p));
  return compact({ from, to, when });
}

export function readTargetRef(r: Reader, v: unknown, path: string): PolicyTargetReference | undefined {
  const o = fields(r, v, path, ['group', 'kind', 'name', 'namespace']);
  if (!o) return undefined;
  const kind = requiredStr(r, get(o, 'kind'), `${path}.kind`);
  const name = requiredStr(r, get(o, 'name'), `${path}.name`);
  const group = str(r, get(o, 'group'), `${path}.group`);
  const namespace = str(r, get(o, 'namespace'), `${path}.namespace`);
  return kind === undefined || name === undefined ? undefined : compact({ group, kind, name, namespace });
}

export function readAuthorizationPolicy(
  r: Reader,
  raw: Raw,
  origin: Origin,
  apiVersion: string,
): AuthorizationPolicy | undefined {
  const meta = readMeta(r, raw, true, 'subdomain');
  // An absent or empty spec is valid: an ALLOW policy without rules, which allows nothing.
  const spec =
    fields(r, get(raw, 'spec'), 'spec', ['selector', 'targetRef', 'targetRefs', 'action', 'provider', 'rules']) ?? {};
  const selectorRaw = workloadSelector(r, get(spec, 'selector'), 'spec.selector');
  const ref = readTargetRef(r, get(spec, 'targetRef'), 'spec.targetRef');
  const refs = list(r, get(spec, 'targetRefs'), 'spec.targetRefs', (item, p) => readTargetRef(r, item, p));
  if (selectorRaw && (ref || refs?.length))
    r.error('spec', 'only one of selector, targetRef or targetRefs may be set', 'conflicting-fields');
  if (ref && refs?.length) r.error('spec', 'only one of targetRef or targetRefs may be set', 'conflicting-fields');

  const actionRaw = str(r, get(spec, 'action'), 'spec.action');
  const action = actionRaw === undefined ? undefined : ACTIONS.find((a) => a === actionRaw);
  if (actionRaw !== undefined && !action)
    r.error('spec.action', `must be one of ${ACTIONS.join(', ')}, got "${actionRaw.slice(0, 20)}"`);
  const providerRaw = fields(r, get(spec, 'provider'), 'spec.provider', ['name']);
  const providerName = providerRaw ? requiredStr(r, get(providerRaw, 'name'), 'spec.provider.name') : undefined;
  if (action === 'CUSTOM' && !providerRaw) r.error('spec.provider', 'is required with action CUSTOM', 'missing-field');
  if (action !== 'CUSTOM' && providerRaw)
    r.error('spec.provider', 'may only be set with action CUSTOM', 'conflicting-fields');

  const rules = list(r, get(spec, 'rules'), 'spec.rules', (item, p) => rule(r, item, p));
  const dryRun = meta?.annotations[DRY_RUN_ANNOTATION];
  if (
    dryRun !== undefined &&
    !['true', 'false', '1', '0', 't', 'f', 'TRUE', 'FALSE', 'True', 'False', 'T', 'F'].includes(dryRun)
  ) {
    r.error(`metadata.annotations.${DRY_RUN_ANNOTATION}`, `must be true or false, got "${dryRun.slice(0, 20)}"`);
  }
  if (!meta || r.failed) return undefined;
  return {
    kind: 'AuthorizationPolicy',
    apiVersion,
    meta,
    origin,
    spec: compact({
      selector: selectorRaw,
      targetRef: ref,
      targetRefs: refs,
      action,
      provider: providerName === undefined ? undefined : { name: providerName },
      rules,
    }),
  };
}

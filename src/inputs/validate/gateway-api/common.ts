/**
 * Fields shared by the Gateway API kinds, validated as the CRDs' OpenAPI schema and CEL rules do
 * (apis/v1/shared_types.go, object_reference_types.go): metadata with generation and creation
 * time, hostnames, parent and backend references, header modifiers.
 */
import {
  GATEWAY_API_GROUP,
  type BackendObjectReference,
  type GatewayApiMeta,
  type HeaderModifier,
  type HTTPHeader,
  type ParentReference,
  type StringValueMatch,
} from '../../../model/gateway-api.js';
import { regexProblem } from '../../../xds/re2.js';
import { duration } from '../duration.js';
import { readMeta } from '../meta.js';
import { fields, get, int, list, requiredStr, str, strList, type Raw, type Reader } from '../reader.js';

/** Reads metadata plus generation and creationTimestamp (status and route precedence read them). */
export function readGatewayApiMeta(r: Reader, raw: Raw, namespaced: boolean): GatewayApiMeta | undefined {
  const meta = readMeta(r, raw, namespaced, 'subdomain');
  const m = get(raw, 'metadata');
  if (!meta || m === null || typeof m !== 'object' || Array.isArray(m)) return meta;
  const generation = get(m as Raw, 'generation');
  const created = get(m as Raw, 'creationTimestamp');
  return {
    ...meta,
    ...(typeof generation === 'number' && Number.isInteger(generation) ? { generation } : {}),
    ...(typeof created === 'string' && created !== '' ? { creationTimestamp: created } : {}),
  };
}

/** The spec object, required. */
export function readSpec(r: Reader, raw: Raw, known: readonly string[]): Raw | undefined {
  const spec = fields(r, get(raw, 'spec'), 'spec', known);
  if (!spec) r.error('spec', 'is required', 'missing-field');
  return spec;
}

const HOSTNAME = /^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const PRECISE_HOSTNAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** A Hostname: a DNS name, optionally with one leading `*.` label; never an IP address. */
export function hostname(r: Reader, v: unknown, path: string, precise = false): string | undefined {
  const h = str(r, v, path);
  if (h === undefined) return undefined;
  if (h.length < 1 || h.length > 253 || !(precise ? PRECISE_HOSTNAME : HOSTNAME).test(h)) {
    r.error(path, `"${h.slice(0, 80)}" is not a valid ${precise ? 'precise ' : ''}hostname`);
    return undefined;
  }
  if (/^[0-9.]+$/.test(h)) {
    r.error(path, `"${h.slice(0, 80)}" is an IP address; hostnames only`);
    return undefined;
  }
  return h;
}

export function hostnames(r: Reader, v: unknown, path: string): string[] {
  return list(r, v, path, (h, p) => hostname(r, h, p), 16) ?? [];
}

const SECTION_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function sectionName(r: Reader, v: unknown, path: string): string | undefined {
  const s = str(r, v, path);
  if (s !== undefined && (s.length > 253 || !SECTION_NAME.test(s))) {
    r.error(path, `"${s.slice(0, 80)}" is not a valid section name (a DNS-1123 subdomain)`);
    return undefined;
  }
  return s;
}

/** An object name: 1–253 characters. */
export function objectName(r: Reader, v: unknown, path: string): string | undefined {
  const s = requiredStr(r, v, path);
  if (s !== undefined && s.length > 253) r.error(path, 'must be at most 253 characters');
  return s;
}

function group(r: Reader, v: unknown, path: string, fallback: string): string {
  const g = str(r, v, path);
  if (g !== undefined && g !== '' && !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(g))
    r.error(path, `"${g.slice(0, 80)}" is not a valid API group`);
  return g ?? fallback;
}

function kind(r: Reader, v: unknown, path: string, fallback: string): string {
  const k = str(r, v, path);
  if (k !== undefined && !/^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$/.test(k))
    r.error(path, `"${k.slice(0, 80)}" is not a valid kind`);
  return k ?? fallback;
}

function namespace(r: Reader, v: unknown, path: string): string | undefined {
  const ns = str(r, v, path);
  if (ns !== undefined && !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(ns)) {
    r.error(path, `"${ns.slice(0, 80)}" is not a valid namespace name`);
    return undefined;
  }
  return ns;
}

export function parentRefs(r: Reader, v: unknown, path: string): ParentReference[] {
  return (
    list(
      r,
      v,
      path,
      (item, p) => {
        const o = fields(r, item, p, ['group', 'kind', 'namespace', 'name', 'sectionName', 'port']);
        if (!o) return undefined;
        const name = objectName(r, get(o, 'name'), `${p}.name`);
        const ns = namespace(r, get(o, 'namespace'), `${p}.namespace`);
        const section = sectionName(r, get(o, 'sectionName'), `${p}.sectionName`);
        const port = int(r, get(o, 'port'), `${p}.port`, 1, 65535);
        if (name === undefined) return undefined;
        return {
          group: group(r, get(o, 'group'), `${p}.group`, GATEWAY_API_GROUP),
          kind: kind(r, get(o, 'kind'), `${p}.kind`, 'Gateway'),
          name,
          ...(ns !== undefined ? { namespace: ns } : {}),
          ...(section !== undefined ? { sectionName: section } : {}),
          ...(port !== undefined ? { port } : {}),
        };
      },
      32,
    ) ?? []
  );
}

export const BACKEND_REF_FIELDS = ['group', 'kind', 'name', 'namespace', 'port'] as const;

/** A BackendObjectReference; the spec requires a port when it names a Service. */
export function backendObjectRef(r: Reader, o: Raw, p: string): BackendObjectReference | undefined {
  const name = objectName(r, get(o, 'name'), `${p}.name`);
  const ns = namespace(r, get(o, 'namespace'), `${p}.namespace`);
  const port = int(r, get(o, 'port'), `${p}.port`, 1, 65535);
  const g = group(r, get(o, 'group'), `${p}.group`, '');
  const k = kind(r, get(o, 'kind'), `${p}.kind`, 'Service');
  if (port === undefined && g === '' && k === 'Service' && get(o, 'port') == null)
    r.error(`${p}.port`, 'must be specified when the referent is a Kubernetes Service', 'missing-field');
  if (name === undefined) return undefined;
  return {
    group: g,
    kind: k,
    name,
    ...(ns !== undefined ? { namespace: ns } : {}),
    ...(port !== undefined ? { port } : {}),
  };
}

export function weight(r: Reader, v: unknown, path: string): number {
  return int(r, v, path, 0, 1_000_000) ?? 1;
}

const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+\-.^_`|~]+$/;

function headerName(r: Reader, v: unknown, path: string): string | undefined {
  const n = requiredStr(r, v, path);
  if (n !== undefined && (n.length > 256 || !HEADER_NAME.test(n))) {
    r.error(path, `"${n.slice(0, 80)}" is not a valid HTTP header name`);
    return undefined;
  }
  return n;
}

function headerList(r: Reader, v: unknown, path: string): HTTPHeader[] {
  const seen = new Set<string>();
  return (
    list(
      r,
      v,
      path,
      (item, p) => {
        const o = fields(r, item, p, ['name', 'value']);
        if (!o) return undefined;
        const name = headerName(r, get(o, 'name'), `${p}.name`);
        const value = requiredStrAllowEmpty(r, get(o, 'value'), `${p}.value`);
        if (name === undefined || value === undefined) return undefined;
        if (seen.has(name.toLowerCase())) r.error(`${p}.name`, `header "${name}" is listed twice`, 'duplicate-key');
        seen.add(name.toLowerCase());
        return { name, value };
      },
      16,
    ) ?? []
  );
}

/** A string that must be present, possibly empty. */
export function requiredStrAllowEmpty(r: Reader, v: unknown, path: string): string | undefined {
  if (v === undefined || v === null) {
    r.error(path, 'is required', 'missing-field');
    return undefined;
  }
  const s = str(r, v, path);
  if (s !== undefined && s.length > 4096) r.error(path, 'must be at most 4096 characters');
  return s;
}

export function headerModifier(r: Reader, v: unknown, path: string): HeaderModifier | undefined {
  const o = fields(r, v, path, ['set', 'add', 'remove']);
  if (!o) return undefined;
  const remove = strList(r, get(o, 'remove'), `${path}.remove`, 16) ?? [];
  remove.forEach((n, i) => headerName(r, n, `${path}.remove[${i}]`));
  return {
    set: headerList(r, get(o, 'set'), `${path}.set`),
    add: headerList(r, get(o, 'add'), `${path}.add`),
    remove,
  };
}

/** Header and query parameter matches: Exact by default; a RegularExpression must compile in RE2. */
export function valueMatches(r: Reader, v: unknown, path: string, header: boolean): StringValueMatch[] {
  const seen = new Set<string>();
  return (
    list(
      r,
      v,
      path,
      (item, p) => {
        const o = fields(r, item, p, ['type', 'name', 'value']);
        if (!o) return undefined;
        const type = str(r, get(o, 'type'), `${p}.type`) ?? 'Exact';
        if (type !== 'Exact' && type !== 'RegularExpression') {
          r.error(`${p}.type`, `"${type.slice(0, 40)}" must be Exact or RegularExpression`);
          return undefined;
        }
        const name = header ? headerName(r, get(o, 'name'), `${p}.name`) : requiredStr(r, get(o, 'name'), `${p}.name`);
        const value = requiredStrAllowEmpty(r, get(o, 'value'), `${p}.value`);
        if (name === undefined || value === undefined) return undefined;
        if (type === 'RegularExpression') {
          const problem = regexProblem(value);
          if (problem) r.error(`${p}.value`, problem);
        }
        const key = header ? name.toLowerCase() : name;
        // "Multiple match values for the same name MUST be ignored after the first."
        if (seen.has(key)) return undefined;
        seen.add(key);
        return { type, name, value };
      },
      16,
    ) ?? []
  );
}

/** A Gateway API Duration (`1h`, `10s`, `500ms`; Go syntax) in milliseconds. */
export function gwDuration(r: Reader, v: unknown, path: string): number | undefined {
  if (typeof v === 'string' && !/^([0-9]{1,5}(h|m|s|ms)){1,4}$/.test(v)) {
    r.error(path, `"${v.slice(0, 40)}" is not a Gateway API duration (examples: "10s", "500ms", "1m30s")`);
    return undefined;
  }
  return duration(r, v, path);
}

/** `metadata` of any object: name, namespace (defaulted), labels, annotations. */
import type { ObjectMeta } from '../../model/k8s.js';
import { get, obj, requiredStr, str, strMap, type Raw, type Reader } from './reader.js';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** Labels joined by single dots: what splitting at `.` and checking each part as a label accepts. */
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export const isDns1123Label = (s: string): boolean => s.length <= 63 && DNS1123_LABEL.test(s);
export const isDns1123Subdomain = (s: string): boolean => s.length <= 253 && DNS1123_SUBDOMAIN.test(s);

export type NameRule = 'label' | 'subdomain';

/**
 * Reads metadata and records the object's namespace/name on the reader, so later diagnostics name
 * it. `namespaced` false: cluster-scoped kinds (Namespace, Node) get namespace "".
 */
export function readMeta(r: Reader, raw: Raw, namespaced: boolean, rule: NameRule): ObjectMeta | undefined {
  const m = obj(r, get(raw, 'metadata'), 'metadata');
  const rawName = m ? get(m, 'name') : undefined;
  const rawNs = m ? get(m, 'namespace') : undefined;
  const namespace = namespaced ? (typeof rawNs === 'string' && rawNs !== '' ? rawNs : 'default') : '';
  const { kind, file, index } = r.id;
  // Built whole (no spread of a temporary per member): every object's metadata comes here.
  const idName = typeof rawName === 'string' && rawName !== '' ? rawName : undefined;
  if (namespaced)
    r.id = idName === undefined ? { kind, file, index, namespace } : { kind, file, index, namespace, name: idName };
  else r.id = idName === undefined ? { kind, file, index } : { kind, file, index, name: idName };

  const name = requiredStr(r, rawName, 'metadata.name');
  if (name !== undefined && !(rule === 'label' ? isDns1123Label(name) : isDns1123Subdomain(name))) {
    r.error(
      'metadata.name',
      `"${name.slice(0, 80)}" is not a valid DNS-1123 ${rule} (lower case letters, digits and "-")`,
      'invalid-name',
    );
  }
  if (namespaced) {
    str(r, rawNs, 'metadata.namespace');
    if (typeof rawNs === 'string' && rawNs !== '' && !isDns1123Label(rawNs)) {
      r.error('metadata.namespace', `"${rawNs.slice(0, 80)}" is not a valid namespace name`, 'invalid-name');
    }
  }
  const labels = m ? strMap(r, get(m, 'labels'), 'metadata.labels') : undefined;
  const annotations = m ? strMap(r, get(m, 'annotations'), 'metadata.annotations') : undefined;
  const rv = m ? get(m, 'resourceVersion') : undefined;
  if (name === undefined) return undefined;
  const l = labels === undefined || isEmpty(labels) ? NO_ENTRIES : labels;
  const a = annotations === undefined || isEmpty(annotations) ? NO_ENTRIES : annotations;
  return typeof rv === 'string'
    ? { name, namespace, labels: l, annotations: a, resourceVersion: rv }
    : { name, namespace, labels: l, annotations: a };
}

/** One frozen empty map for every object without labels or annotations (most have no annotations). */
const NO_ENTRIES: Readonly<Record<string, string>> = Object.freeze({});

function isEmpty(o: object): boolean {
  for (const _ in o) return false;
  return true;
}

/** `metadata.creationTimestamp` as the API server writes it (RFC 3339): where istiod orders objects by age. */
export function readCreationTimestamp(r: Reader, raw: Raw): string | undefined {
  const meta = get(raw, 'metadata');
  return meta !== null && typeof meta === 'object' && !Array.isArray(meta)
    ? str(r, get(meta as Raw, 'creationTimestamp'), 'metadata.creationTimestamp')
    : undefined;
}

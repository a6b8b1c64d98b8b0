/** `metadata` of any object: name, namespace (defaulted), labels, annotations. */
import type { ObjectMeta } from '../../model/k8s.js';
import { get, obj, requiredStr, str, strMap, type Raw, type Reader } from './reader.js';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN_PART = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export const isDns1123Label = (s: string): boolean => s.length <= 63 && DNS1123_LABEL.test(s);
export const isDns1123Subdomain = (s: string): boolean =>
  s.length <= 253 && s.split('.').every((p) => DNS1123_SUBDOMAIN_PART.test(p));

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
  r.id = {
    kind,
    file,
    index,
    ...(namespaced ? { namespace } : {}),
    ...(typeof rawName === 'string' && rawName !== '' ? { name: rawName } : {}),
  };

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
  return {
    name,
    namespace,
    labels: labels ?? {},
    annotations: annotations ?? {},
    ...(typeof rv === 'string' ? { resourceVersion: rv } : {}),
  };
}

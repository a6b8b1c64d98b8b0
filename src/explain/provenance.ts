/**
 * The Istio objects behind a resource, read back from istiod's provenance metadata
 * (`filter_metadata.istio.config = /apis/networking.istio.io/v1/namespaces/<ns>/<kind>/<name>`,
 * written by src/compile/metadata.ts). Pure.
 */
import { istioConfigOf } from './json.js';
import type { Provenance } from './types.js';

const CONFIG_PATH = /^\/apis\/[^/]+\/[^/]+\/namespaces\/([^/]+)\/([^/]+)\/([^/]+)$/;

/** `virtual-service` → `VirtualService`. */
const kindName = (plural: string): string =>
  plural
    .split('-')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');

export function parseProvenance(config: string): Provenance {
  const m = CONFIG_PATH.exec(config);
  if (!m) return { kind: 'unknown', namespace: '', name: config, config };
  return { kind: kindName(m[2] as string), namespace: m[1] as string, name: m[3] as string, config };
}

/** The provenance of a resource's `metadata`, as a list of zero or one. */
export function provenanceOf(metadata: unknown): Provenance[] {
  const config = istioConfigOf(metadata);
  return config === undefined ? [] : [parseProvenance(config)];
}

export function uniqueProvenance(lists: Iterable<readonly Provenance[]>): Provenance[] {
  const seen = new Map<string, Provenance>();
  for (const list of lists) for (const p of list) if (!seen.has(p.config)) seen.set(p.config, p);
  return [...seen.values()];
}

export const provenanceLabel = (p: Provenance): string =>
  p.kind === 'unknown' ? p.config : `${p.kind} ${p.namespace}/${p.name}`;

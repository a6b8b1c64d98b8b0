/**
 * A Pod's `proxy.istio.io/config` annotation: the ProxyConfig its injector merged over the mesh's
 * `defaultConfig` (istiod reads the merged result from the proxy's node metadata). Of it meshsnap
 * reads the parts that are xDS and that it applies per proxy class — `proxyHeaders`,
 * `gatewayTopology`, `connectionSettings` and `tracing`, for gateways (compile/gateway) — with the mesh config's checks
 * (proxy-config.ts); the rest is the agent's and the bootstrap's, read silently.
 */
import type { ProxyConfigParts } from '../../model/mesh-config.js';
import { parseDocuments } from '../parse.js';
import { readDefaultConfig } from './proxy-config.js';
import type { Raw, Reader } from './reader.js';

export const PROXY_CONFIG_ANNOTATION = 'proxy.istio.io/config';

/** Bound on the annotation's text (the API server allows 256 KiB of annotations in all). */
const MAX_PROXY_CONFIG_CHARS = 16_384;

export function readPodProxyConfig(r: Reader, text: string | undefined): ProxyConfigParts | undefined {
  if (text === undefined) return undefined;
  const path = `metadata.annotations.${PROXY_CONFIG_ANNOTATION}`;
  if (text.length > MAX_PROXY_CONFIG_CHARS) {
    r.error(path, `is longer than ${MAX_PROXY_CONFIG_CHARS} characters`);
    return undefined;
  }
  const parsed = parseDocuments(text, r.id.file ?? '');
  for (const d of parsed.diagnostics) r.error(path, d.message, 'parse-error');
  const doc = parsed.docs[0]?.object;
  if (parsed.docs.length > 1) r.error(path, 'must hold one YAML document');
  if (doc === undefined || doc === null || typeof doc !== 'object' || Array.isArray(doc)) return undefined;
  const parts: Record<string, unknown> = {};
  for (const key of ['proxyHeaders', 'gatewayTopology', 'connectionSettings', 'tracing'])
    if (Object.hasOwn(doc, key)) parts[key] = (doc as Raw)[key];
  const read = readDefaultConfig(r, parts, path);
  return read.proxyHeaders || read.gatewayTopology || read.connectionSettings || read.tracing ? read : undefined;
}

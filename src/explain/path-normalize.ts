/**
 * What the HTTP connection manager does to the path before routing, in Envoy's order:
 * `path_with_escaped_slashes_action` UNESCAPE_AND_* (`%2F` → `/`, `%5C` → `\`), `normalize_path`
 * (RFC 3986 dot-segment removal, as Envoy's path canonicalizer does) and `merge_slashes` (`//` →
 * `/`). Istio turns on `normalize_path` (MeshConfig `pathNormalization`). The query string is kept
 * as it is. Pure.
 */
import type { JsonObject } from './json.js';

/** RFC 3986 section 5.2.4, remove_dot_segments. */
export function removeDotSegments(path: string): string {
  const out: string[] = [];
  const segments = path.split('/');
  for (const [i, seg] of segments.entries()) {
    const last = i === segments.length - 1;
    if (seg === '.') {
      if (last) out.push('');
      continue;
    }
    if (seg === '..') {
      if (out.length > 1) out.pop();
      if (last) out.push('');
      continue;
    }
    out.push(seg);
  }
  const joined = out.join('/');
  return joined.startsWith('/') ? joined : `/${joined}`;
}

export function normalizeRequestPath(hcm: JsonObject, pathAndQuery: string): string {
  const q = pathAndQuery.indexOf('?');
  let path = q < 0 ? pathAndQuery : pathAndQuery.slice(0, q);
  const query = q < 0 ? '' : pathAndQuery.slice(q);
  const escaped = hcm.path_with_escaped_slashes_action;
  if (escaped === 'UNESCAPE_AND_FORWARD' || escaped === 'UNESCAPE_AND_REDIRECT')
    path = path.replace(/%2f/gi, '/').replace(/%5c/gi, '\\');
  if (hcm.normalize_path === true) path = removeDotSegments(path);
  if (hcm.merge_slashes === true) path = path.replace(/\/{2,}/g, '/');
  return path + query;
}

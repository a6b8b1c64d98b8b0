/**
 * Istio StringMatch (`exact` | `prefix` | `regex`, exactly one). A `regex` must be one Envoy's RE2
 * accepts (src/xds/re2.ts).
 */
import type { StringMatch } from '../../model/istio.js';
import { regexProblem } from '../../xds/re2.js';
import { fields, get, str, type Reader } from './reader.js';

export { ENVOY_RE2_MAX_PROGRAM_SIZE, regexProblem } from '../../xds/re2.js';

export function stringMatch(r: Reader, v: unknown, path: string): StringMatch | undefined {
  const o = fields(r, v, path, ['exact', 'prefix', 'regex']);
  if (!o) return undefined;
  const exact = str(r, get(o, 'exact'), `${path}.exact`);
  const prefix = str(r, get(o, 'prefix'), `${path}.prefix`);
  const regex = str(r, get(o, 'regex'), `${path}.regex`);
  const set = [exact, prefix, regex].filter((x) => x !== undefined).length;
  if (set > 1) r.error(path, 'must set only one of exact, prefix, regex');
  if (regex !== undefined) {
    const problem = regexProblem(regex);
    if (problem) r.error(`${path}.regex`, problem);
  }
  if (exact !== undefined) return { exact };
  if (prefix !== undefined) return { prefix };
  if (regex !== undefined) return { regex };
  return {};
}

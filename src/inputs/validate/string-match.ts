/**
 * Istio StringMatch (`exact` | `prefix` | `regex`, exactly one) and the regex check: Envoy
 * compiles `regex` with RE2, which has no lookaround and no backreferences; JS `RegExp` accepts
 * both, so they are looked for explicitly. RE2-only syntax that JS lacks (inline flags `(?i)`,
 * `(?P<name>…)`) is translated before the JS compile so valid RE2 is not rejected.
 */
import type { StringMatch } from '../../model/istio.js';
import { fields, get, str, type Reader } from './reader.js';

/** Why `pattern` is not usable by Envoy's RE2, or undefined when it is fine. */
export function regexProblem(pattern: string): string | undefined {
  const re2Only = unsupportedRe2Feature(pattern);
  if (re2Only) return re2Only;
  const js = pattern.replace(/\(\?[imsU]+\)/g, '').replace(/\(\?[imsU]*-?[imsU]*:/g, '(?:').replace(/\(\?P</g, '(?<');
  try {
    new RegExp(js);
  } catch (e) {
    return `invalid regular expression: ${e instanceof Error ? e.message : String(e)}`;
  }
  return undefined;
}

/** Scans outside character classes for lookaround groups and backreferences. */
function unsupportedRe2Feature(p: string): string | undefined {
  let inClass = false;
  for (let i = 0; i < p.length; i++) {
    const c = p[i];
    if (c === '\\') {
      const n = p[i + 1] ?? '';
      if (!inClass && (/[1-9]/.test(n) || (n === 'k' && p[i + 2] === '<'))) return 'backreferences are not supported by Envoy (RE2)';
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') {
      inClass = true;
      if (p[i + 1] === ']') i++; // `[]…]`: a leading ] is literal
      continue;
    }
    if (c === '(' && p[i + 1] === '?') {
      const rest = p.slice(i + 2, i + 4);
      if (rest.startsWith('=') || rest.startsWith('!') || rest === '<=' || rest === '<!') return 'lookaround assertions are not supported by Envoy (RE2)';
    }
  }
  return undefined;
}

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

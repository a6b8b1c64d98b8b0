/**
 * The RE2 check of a regex Envoy will compile. Envoy compiles
 * `regex` with Google RE2 and refuses, with a NACK of the whole route configuration, a pattern RE2
 * rejects (`a{2000}`, `\\Z`, lookaround, backreferences) or whose RE2 program is larger than the
 * runtime key `re2.max_program_size.error_level` — Envoy's default is 100, and istiod's sidecar and
 * gateway bootstrap raise it to 32768 (pkg/bootstrap/config.go, as `meshsnap bootstrap` does too).
 * So patterns are compiled here with re2js, a pure-JS port of RE2 (it runs in workerd too), and its
 * program size is checked against Istio's limit. re2js is a port of RE2/J: its program size
 * approximates C++ RE2's (README, "Regexes").
 */
import { RE2JS } from 're2js';

/** `re2.max_program_size.error_level` as Istio's bootstrap sets it: a larger regex program is refused. */
export const ENVOY_RE2_MAX_PROGRAM_SIZE = 32768;

/** Why `pattern` is not usable by Envoy's RE2, or undefined when it is fine. */
export function regexProblem(pattern: string): string | undefined {
  const re2Only = unsupportedRe2Feature(pattern);
  if (re2Only) return re2Only;
  let size: number;
  try {
    size = RE2JS.compile(pattern).programSize();
  } catch (e) {
    return `invalid RE2 regular expression: ${e instanceof Error ? e.message : String(e)}`;
  }
  if (size > ENVOY_RE2_MAX_PROGRAM_SIZE)
    return `RE2 program size ${size} is over the max program size Istio's proxies run with, ${ENVOY_RE2_MAX_PROGRAM_SIZE}: Envoy would refuse it`;
  return undefined;
}

/** Scans outside character classes for lookaround groups and backreferences. */
function unsupportedRe2Feature(p: string): string | undefined {
  let inClass = false;
  for (let i = 0; i < p.length; i++) {
    const c = p[i];
    if (c === '\\') {
      const n = p[i + 1] ?? '';
      if (!inClass && (/[1-9]/.test(n) || (n === 'k' && p[i + 2] === '<')))
        return 'backreferences are not supported by Envoy (RE2)';
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
      if (rest.startsWith('=') || rest.startsWith('!') || rest === '<=' || rest === '<!')
        return 'lookaround assertions are not supported by Envoy (RE2)';
    }
  }
  return undefined;
}

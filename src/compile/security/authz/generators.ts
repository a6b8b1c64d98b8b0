/**
 * One generator per authorization attribute (istiod's model/generator.go): a value of the policy
 * becomes an RBAC permission (what is requested) or principal (who asks). Single-value generators
 * see one value at a time and are OR-ed by the caller; "extended" ones see the whole list.
 */
import {
  headerMatcher,
  listOrValueMatcher,
  metadataMatcher,
  orValue,
  quoteMeta,
  regexMatcher,
  exactMatcher,
  prefixMatcher,
  suffixMatcher,
  stringMatcher,
  stringOrValue,
  stringValue,
  type StringMatcher,
  type ValueMatcher,
} from './matchers.js';
import { containsPathTemplate, pathTemplateMatcher, URI_TEMPLATE_TYPE } from './path-template.js';
import {
  AuthzError,
  cidrRange,
  isError,
  principalAnd,
  principalOr,
  type Permission,
  type Principal,
  type Result,
} from './rbac-types.js';
import { packAny } from '../../../xds/proto.js';

export interface Context {
  readonly forTCP: boolean;
  /** false: match the peer principal from filter state instead of the TLS peer certificate. */
  readonly useAuthenticated: boolean;
  /** The policy's namespace (the default of a service account without one). */
  readonly namespace: string;
}

export interface SingleGenerator {
  readonly kind: 'single';
  permission?(key: string, value: string, ctx: Context): Result<Permission>;
  principal?(key: string, value: string, ctx: Context): Result<Principal>;
}

export interface ExtendedGenerator {
  readonly kind: 'extended';
  permission?(key: string, values: readonly string[], ctx: Context): Result<Permission | undefined>;
  principal?(key: string, values: readonly string[], ctx: Context): Result<Principal | undefined>;
}

export type Generator = SingleGenerator | ExtendedGenerator;

const JWT_FILTER = 'envoy.filters.http.jwt_authn';
const JWT_PAYLOAD = 'payload';
const SPIFFE_PREFIX = 'spiffe://';

const httpOnly = (key: string, ctx: Context): AuthzError | undefined =>
  ctx.forTCP ? new AuthzError(`${JSON.stringify(key)} is HTTP only`) : undefined;

function authenticated(name: StringMatcher, ctx: Context): Principal {
  return ctx.useAuthenticated
    ? { authenticated: { principal_name: name } }
    : { filter_state: { key: 'io.istio.peer_principal', string_match: name } };
}

function port(value: string): Result<number> {
  const n = /^\d+$/.test(value) ? Number(value) : NaN;
  return Number.isInteger(n) && n <= 65535 ? n : new AuthzError(`invalid port ${value}`);
}

/** `[a]`, or nested `[a][b]` → the names inside the brackets. */
export function bracketNames(s: string, nested: boolean): Result<string[]> {
  const single = (): Result<string[]> =>
    s.startsWith('[') && s.endsWith(']')
      ? [s.slice(1, -1)]
      : new AuthzError(`expecting format [<NAME>], but found ${s}`);
  if (!nested) return single();
  const names: string[] = [];
  for (let begin = 0; begin < s.length;) {
    const end = s[begin] === '[' ? s.indexOf(']', begin + 1) : -1;
    if (end < 0 || s.slice(begin + 1, end).includes('[')) return single();
    names.push(s.slice(begin + 1, end));
    begin = end + 1;
  }
  return names;
}

export const destinationIp: SingleGenerator = {
  kind: 'single',
  permission: (_k, value) => {
    const cidr = cidrRange(value);
    return isError(cidr) ? cidr : { destination_ip: cidr };
  },
};

export const destinationPort: SingleGenerator = {
  kind: 'single',
  permission: (_k, value) => {
    const p = port(value);
    return isError(p) ? p : { destination_port: p };
  },
};

export const connectionSni: SingleGenerator = {
  kind: 'single',
  permission: (_k, value) => ({ requested_server_name: stringMatcher(value) }),
};

/** `experimental.envoy.filters.<filter>[<key>]`: dynamic metadata; a `[v]` value matches inside a list. */
export const envoyFilter: ExtendedGenerator = {
  kind: 'extended',
  permission: (key, values) => {
    const stripped = key.slice('experimental.'.length).replace(/\]$/, '');
    const open = stripped.indexOf('[');
    if (open < 0) return new AuthzError(`invalid key: ${key}`);
    const matchers: ValueMatcher[] = values.map((v) =>
      v.startsWith('[') && v.endsWith(']')
        ? { list_match: { one_of: stringValue(stringMatcher(v.replace(/^\[+|\]+$/g, ''))) } }
        : stringValue(stringMatcher(v)),
    );
    return { metadata: metadataMatcher(stripped.slice(0, open), [stripped.slice(open + 1)], orValue(matchers)) };
  },
};

export const sourceIp: SingleGenerator = {
  kind: 'single',
  principal: (_k, value) => {
    const cidr = cidrRange(value);
    return isError(cidr) ? cidr : { direct_remote_ip: cidr };
  },
};

export const remoteIp: SingleGenerator = {
  kind: 'single',
  principal: (_k, value) => {
    const cidr = cidrRange(value);
    return isError(cidr) ? cidr : { remote_ip: cidr };
  },
};

export const sourceNamespace: SingleGenerator = {
  kind: 'single',
  principal: (_k, value, ctx) =>
    authenticated(regexMatcher(`.*/ns/${value.split('*').map(quoteMeta).join('.*')}/.*`), ctx),
};

export const sourceServiceAccount: SingleGenerator = {
  kind: 'single',
  principal: (_k, value, ctx) => {
    const slash = value.indexOf('/');
    const [ns, sa] = slash < 0 ? [ctx.namespace, value] : [value.slice(0, slash), value.slice(slash + 1)];
    return authenticated(regexMatcher(`spiffe://.+/ns/${quoteMeta(ns)}/(.+/|)sa/${quoteMeta(sa)}(/.+)?`), ctx);
  },
};

export const sourceTrustDomain: SingleGenerator = {
  kind: 'single',
  principal: (_k, value, ctx) => {
    if (value === '*') return authenticated(prefixMatcher(SPIFFE_PREFIX), ctx);
    if (!value.includes('*')) return authenticated(prefixMatcher(`${SPIFFE_PREFIX}${value}/`), ctx);
    const star = value.indexOf('*');
    return authenticated(
      regexMatcher(`spiffe://${quoteMeta(value.slice(0, star))}[^/]*${quoteMeta(value.slice(star + 1))}/.*`),
      ctx,
    );
  },
};

export const sourcePrincipal: SingleGenerator = {
  kind: 'single',
  principal: (_k, value, ctx) => authenticated(stringMatcher(value, SPIFFE_PREFIX), ctx),
};

const MATCH_ANY = regexMatcher('.+');

/** `iss/sub` of a JWT, each side possibly a wildcard. */
function requestPrincipalIds(value: string): [StringMatcher, StringMatcher] {
  const idx = value.lastIndexOf('/');
  const found = idx >= 0;
  const [iss, sub] = found ? [value.slice(0, idx), value.slice(idx + 1)] : [value, ''];
  if (value === '*') return [MATCH_ANY, MATCH_ANY];
  if (value.startsWith('*')) {
    if (found) return [iss === '*' ? MATCH_ANY : suffixMatcher(iss.slice(1)), exactMatcher(sub)];
    return [MATCH_ANY, suffixMatcher(value.slice(1))];
  }
  if (value.endsWith('*')) {
    if (found) return [exactMatcher(iss), sub === '*' ? MATCH_ANY : prefixMatcher(sub.slice(0, -1))];
    return [prefixMatcher(value.slice(0, -1)), MATCH_ANY];
  }
  return [exactMatcher(iss), exactMatcher(sub)];
}

export const requestPrincipal: ExtendedGenerator = {
  kind: 'extended',
  principal: (key, values, ctx) => {
    const tcp = httpOnly(key, ctx);
    if (tcp) return tcp;
    const or = values.map((value): Principal => {
      const [iss, sub] = requestPrincipalIds(value);
      return principalAnd([
        { metadata: metadataMatcher(JWT_FILTER, [JWT_PAYLOAD, 'iss'], stringValue(iss)) },
        { metadata: metadataMatcher(JWT_FILTER, [JWT_PAYLOAD, 'sub'], stringValue(sub)) },
      ]);
    });
    if (or.length === 0) return undefined;
    return or.length === 1 ? or[0] : principalOr(or);
  },
};

/** A JWT claim (possibly nested) that is a string or a list of strings. */
function claimGenerator(claims: (key: string) => Result<string[]>): ExtendedGenerator {
  return {
    kind: 'extended',
    principal: (key, values, ctx) => {
      const tcp = httpOnly(key, ctx);
      if (tcp) return tcp;
      const path = claims(key);
      if (isError(path)) return path;
      return { metadata: listOrValueMatcher(JWT_FILTER, [JWT_PAYLOAD, ...path], stringOrValue(values)) };
    },
  };
}

export const requestAudiences = claimGenerator(() => ['aud']);
export const requestPresenter = claimGenerator(() => ['azp']);
export const requestClaim = claimGenerator((key) => bracketNames(key.slice('request.auth.claims'.length), true));

export const requestHeader: SingleGenerator = {
  kind: 'single',
  principal: (key, value, ctx) => {
    const tcp = httpOnly(key, ctx);
    if (tcp) return tcp;
    const name = bracketNames(key.slice('request.headers'.length), false);
    return isError(name) ? name : { header: headerMatcher(name[0] as string, value) };
  },
};

export const host: SingleGenerator = {
  kind: 'single',
  permission: (key, value, ctx) => httpOnly(key, ctx) ?? { header: headerMatcher(':authority', value, true) },
};

export const method: SingleGenerator = {
  kind: 'single',
  permission: (key, value, ctx) => httpOnly(key, ctx) ?? { header: headerMatcher(':method', value) },
};

export const path: SingleGenerator = {
  kind: 'single',
  permission: (key, value, ctx) => {
    const tcp = httpOnly(key, ctx);
    if (tcp) return tcp;
    if (containsPathTemplate(value))
      return {
        uri_template: { name: 'uri-template', typed_config: packAny(URI_TEMPLATE_TYPE, pathTemplateMatcher(value)) },
      };
    return { url_path: { path: stringMatcher(value) } };
  },
};

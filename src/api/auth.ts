/**
 * Bearer-token auth for the API. Writes always need a write token; reads are open unless the
 * configuration closes them (then a read token or a write token opens them).
 *
 * Tokens are compared in constant time without node:crypto (the app also runs in workerd and
 * Lambda): XOR over the UTF-8 bytes, with the length difference folded into the result, and every
 * configured token is compared (no early exit), so the time taken says nothing about how much of
 * a guess was right or which token it was close to.
 *
 * Not hono/bearer-auth: it answers 400 to a header that is not `Bearer <token>` (the contract here
 * is 401), refuses tokens outside RFC 6750's token68 characters before comparing (named tokens
 * from MESHSNAP_WRITE_TOKENS may hold any character), and has no notion of open reads or of a
 * read token on a write (403); its `verifyToken` hook would leave only this comparison to it.
 */
import { badRequest, forbidden, unauthorized } from '../errors.js';

export interface NamedToken {
  /** The caller's identity when it presents this token (recorded in the audit log). */
  readonly name: string;
  readonly token: string;
}

export interface AuthConfig {
  /** One token (its caller is named `api`) or several named ones. */
  readonly writeToken: string | readonly NamedToken[];
  /** Tokens that open reads only; giving any closes reads to everyone else. */
  readonly readToken?: string | readonly NamedToken[];
  /** Reads without a token. Default: true unless `readToken` is given. */
  readonly openReads?: boolean;
}

export type Access = 'read' | 'write';

/** Who called: the token's name, or `anonymous` for an open read. */
export interface Caller {
  readonly access: Access | 'none';
  readonly token: string | null;
}

/** The caller's recorded identity, from the matched token and the request headers. */
export type IdentityResolver = (
  caller: Caller,
  header: (name: string) => string | undefined,
) => string | Promise<string>;

const encoder = new TextEncoder();

/** True when a and b are the same string; its running time depends only on their lengths. */
export function constantTimeEqual(a: string, b: string): boolean {
  const x = encoder.encode(a);
  const y = encoder.encode(b);
  const n = Math.max(x.length, y.length);
  let diff = x.length ^ y.length;
  for (let i = 0; i < n; i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}

const named = (t: string | readonly NamedToken[] | undefined, defaultName: string): readonly NamedToken[] =>
  t === undefined ? [] : typeof t === 'string' ? [{ name: defaultName, token: t }] : t;

/** The first token that matches, after comparing against all of them. */
function match(presented: string, tokens: readonly NamedToken[]): NamedToken | null {
  let found: NamedToken | null = null;
  for (const t of tokens) if (constantTimeEqual(presented, t.token) && found === null) found = t;
  return found;
}

export interface Authenticator {
  /** The caller allowed `access`, or a MeshsnapError (401 without a valid token, 403 with a read token on a write). */
  check(authorization: string | undefined, access: Access): Caller;
  readonly openReads: boolean;
}

export function authenticator(config: AuthConfig): Authenticator {
  const write = named(config.writeToken, 'api');
  const read = named(config.readToken, 'reader');
  if (write.length === 0 || write.some((t) => t.token.length === 0))
    throw new Error('auth: a non-empty write token is required');
  if (read.some((t) => t.token.length === 0)) throw new Error('auth: read tokens must not be empty');
  const openReads = config.openReads ?? read.length === 0;
  return {
    openReads,
    check(authorization, access) {
      const m = authorization === undefined ? null : /^Bearer[ ]+(\S+)\s*$/i.exec(authorization);
      const presented = m?.[1];
      if (presented === undefined) {
        if (access === 'read' && openReads) return { access: 'none', token: null };
        throw unauthorized(
          authorization === undefined
            ? 'this needs Authorization: Bearer <token>'
            : 'malformed Authorization header (expected "Bearer <token>")',
        );
      }
      const w = match(presented, write);
      if (w) return { access: 'write', token: w.name };
      const r = match(presented, read);
      if (r) {
        if (access === 'write') throw forbidden(`token ${r.name} may only read`);
        return { access: 'read', token: r.name };
      }
      // A wrong token is refused even where reads are open: it is a misconfigured client.
      throw unauthorized('invalid token');
    },
  };
}

export const ACTOR_HEADER = 'X-Meshsnap-Actor';

/** Identity = the token's name (the default: headers are not trusted). */
export const tokenIdentity: IdentityResolver = (caller) => caller.token ?? 'anonymous';

/**
 * Identity = the `X-Meshsnap-Actor` header, for deployments behind a proxy that authenticates
 * people and sets it (the token then names the proxy, kept as `actor (via token)`).
 */
export const actorHeaderIdentity: IdentityResolver = (caller, header) => {
  const actor = header(ACTOR_HEADER)?.trim();
  const token = caller.token ?? 'anonymous';
  if (!actor) return token;
  if (!/^[\w.@+:/ -]{1,128}$/.test(actor))
    throw badRequest(`${ACTOR_HEADER}: use at most 128 letters, digits and . @ + : / - _ space`);
  return `${actor} (via ${token})`;
};

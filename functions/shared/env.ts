/**
 * The serverless functions' configuration, read from their environment (Worker vars and secrets,
 * Lambda environment variables) into what createApp takes. Pure: the caller passes the env object
 * (`env` in a Worker, `process.env` in Lambda), so this runs in workerd and in tests alike.
 *
 *   MESHSNAP_WRITE_TOKEN   the write token (caller name `api`); MESHSNAP_API_TOKEN, the name
 *                          `meshsnap serve` uses, is accepted too
 *   MESHSNAP_WRITE_TOKENS  optional JSON object {"<caller name>": "<token>", ...}: one token per
 *                          caller, so the audit log names who wrote
 *   MESHSNAP_READ_TOKEN    optional; when set, reads need it (or a write token)
 *   MESHSNAP_OPEN_READS    "true" / "false": override whether reads need a token
 *   MESHSNAP_CHANNEL       the default channel (default `main`)
 *   MESHSNAP_TRUST_ACTOR_HEADER  "true": record X-Meshsnap-Actor (set by an authenticating proxy)
 *   MESHSNAP_COMPILE_TOKEN optional; when set, POST /compile needs it as a bearer token
 */
import { MeshsnapError } from '../../src/errors.js';
import {
  actorHeaderIdentity,
  tokenIdentity,
  type AuthConfig,
  type IdentityResolver,
  type NamedToken,
} from '../../src/api/auth.js';

export type EnvLike = Readonly<Record<string, unknown>>;

export class ConfigError extends MeshsnapError {
  override readonly name = 'ConfigError';
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super('internal', message, options);
  }
}

/** A string variable, or undefined when absent or empty (an empty secret is as good as none). */
export function envString(env: EnvLike, name: string): string | undefined {
  const v = env[name];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function envFlag(env: EnvLike, name: string): boolean | undefined {
  const v = envString(env, name)?.toLowerCase();
  if (v === undefined) return undefined;
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw new ConfigError(`${name} must be true or false, not ${JSON.stringify(v)}`);
}

function namedTokens(env: EnvLike): NamedToken[] {
  const text = envString(env, 'MESHSNAP_WRITE_TOKENS');
  if (text === undefined) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // The message must not echo the text: it is a secret.
    throw new ConfigError('MESHSNAP_WRITE_TOKENS is not JSON (expected {"name": "token", ...})');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new ConfigError('MESHSNAP_WRITE_TOKENS must be a JSON object {"name": "token", ...}');
  return Object.entries(parsed as Record<string, unknown>).map(([name, token]) => {
    if (typeof token !== 'string' || token === '')
      throw new ConfigError(`MESHSNAP_WRITE_TOKENS: the token of ${JSON.stringify(name)} must be a non-empty string`);
    return { name, token };
  });
}

export function authFromEnv(env: EnvLike): AuthConfig {
  const single = envString(env, 'MESHSNAP_WRITE_TOKEN') ?? envString(env, 'MESHSNAP_API_TOKEN');
  const write = [...(single !== undefined ? [{ name: 'api', token: single }] : []), ...namedTokens(env)];
  // Refuse to start without one: an API nobody can write to is a misconfiguration, and a default token would be a hole.
  if (write.length === 0) throw new ConfigError('set MESHSNAP_WRITE_TOKEN (a secret) or MESHSNAP_WRITE_TOKENS');
  const readToken = envString(env, 'MESHSNAP_READ_TOKEN') ?? envString(env, 'MESHSNAP_API_READ_TOKEN');
  const openReads = envFlag(env, 'MESHSNAP_OPEN_READS');
  return {
    writeToken: write,
    ...(readToken !== undefined ? { readToken } : {}),
    ...(openReads !== undefined ? { openReads } : {}),
  };
}

export function identityFromEnv(env: EnvLike): IdentityResolver {
  return envFlag(env, 'MESHSNAP_TRUST_ACTOR_HEADER') ? actorHeaderIdentity : tokenIdentity;
}

export const channelFromEnv = (env: EnvLike): string => envString(env, 'MESHSNAP_CHANNEL') ?? 'main';

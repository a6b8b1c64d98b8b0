/** Request parsing shared by the routes: every problem becomes a 400 with a stable code, never a 500. */
import type { Context } from 'hono';
import { isValidChannel } from '../snapshot/manifest.js';
import { XDS_TYPES, type XdsType } from '../xds/type-urls.js';
import type { ApiDeps, ApiEnv } from './context.js';
import { badRequest, notFound } from '../errors.js';
import { isVersionSelector, SELECTOR_GRAMMAR } from '../history/select.js';

type Json = Record<string, unknown>;

const isRecord = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The request body as a JSON object (an empty body is `{}`). Its size was checked as it arrived by
 * the write guard's body limit (app.ts), which refuses a larger body with 413 before it is buffered.
 */
export async function jsonBody(c: Context<ApiEnv>): Promise<Json> {
  const text = await c.req.text();
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw badRequest(`request body is not JSON: ${(err as Error).message}`);
  }
  if (!isRecord(value)) throw badRequest('request body must be a JSON object');
  return value;
}

export function channelParam(c: Context<ApiEnv>): string {
  const ch = c.req.param('ch') ?? '';
  if (!isValidChannel(ch))
    throw badRequest(`invalid channel name ${JSON.stringify(ch)}: use letters, digits, '.', '_' and '-'`);
  return ch;
}

/** The `:ch` of a channel that exists (the default, a configured one, or one with versions); else 404. */
export async function knownChannel(
  c: Context<ApiEnv>,
  deps: Pick<ApiDeps, 'store' | 'channelDefault' | 'channels'>,
): Promise<string> {
  const ch = channelParam(c);
  if (ch === deps.channelDefault || deps.channels.includes(ch) || (await deps.store.readChannel(ch)) !== null)
    return ch;
  throw notFound(`no channel ${JSON.stringify(ch)}`);
}

/**
 * A version selector, checked against the one grammar (src/history/select.ts): a number, `latest`,
 * `tag:NAME`, a plain NAME that is not a number, `candidate:N`. Malformed is a 400; a well-formed
 * selector naming nothing is a 404 later, from the history library.
 */
export function selectorOf(value: unknown, what: string): string {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 1) return String(value);
  if (typeof value !== 'string' || !isVersionSelector(value))
    throw badRequest(`${what}: ${JSON.stringify(value ?? null)} is not a version (${SELECTOR_GRAMMAR})`);
  return value;
}

export function optionalString(body: Json, key: string, max = 1024): string | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw badRequest(`${key} must be a string`);
  if (v.length > max) throw badRequest(`${key} is longer than ${max} characters`);
  return v;
}

export function requiredString(body: Json, key: string, max = 1024): string {
  const v = optionalString(body, key, max);
  if (v === undefined || v.trim() === '') throw badRequest(`${key} is required`);
  return v;
}

/** A boolean field; absent (or null) is false. */
export function booleanField(body: Json, key: string): boolean {
  const v = body[key];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw badRequest(`${key} must be true or false`);
  return v;
}

/** An optional finite number field, at least `min` (and whole when `integer`). */
export function optionalNumber(
  body: Json,
  key: string,
  min: number,
  opts: { readonly integer?: boolean } = {},
): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  const kind = opts.integer ? 'a whole number' : 'a number';
  if (typeof v !== 'number' || !Number.isFinite(v) || (opts.integer && !Number.isInteger(v)))
    throw badRequest(`${key} must be ${kind}`);
  if (v < min) throw badRequest(`${key} must be ${kind} ≥ ${min}`);
  return v;
}

/** Rejects fields the route does not know (a misspelt option of a destructive write must not be ignored). */
export function onlyFields(body: Json, known: readonly string[]): void {
  const unknown = Object.keys(body).filter((k) => !known.includes(k));
  if (unknown.length > 0)
    throw badRequest(
      `unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => JSON.stringify(k)).join(', ')}: expected ${known.join(', ')}`,
    );
}

export function intQuery(c: Context<ApiEnv>, key: string, min: number, max: number): number | undefined {
  const v = c.req.query(key);
  if (v === undefined || v === '') return undefined;
  if (!/^[0-9]{1,9}$/.test(v)) throw badRequest(`${key} must be a whole number`);
  const n = Number(v);
  if (n < min || n > max) throw badRequest(`${key} must be between ${min} and ${max}`);
  return n;
}

/** `type=clusters,routes` → those types; absent → all four. */
export function typesQuery(c: Context<ApiEnv>): readonly XdsType[] {
  const v = c.req.query('type');
  if (v === undefined || v === '') return XDS_TYPES;
  const types = v.split(',');
  for (const t of types)
    if (!(XDS_TYPES as readonly string[]).includes(t)) throw badRequest(`type must be one of ${XDS_TYPES.join(', ')}`);
  return types as XdsType[];
}

/** `metadata=<JSON object>` (node metadata, as Envoy sends it). */
export function metadataQuery(c: Context<ApiEnv>): Record<string, unknown> {
  const v = c.req.query('metadata');
  if (v === undefined || v === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(v);
  } catch (err) {
    throw badRequest(`metadata is not JSON: ${(err as Error).message}`);
  }
  if (!isRecord(value)) throw badRequest('metadata must be a JSON object');
  return value;
}

/** An ISO 8601 time or a duration back from now (`15m`, `2h`, `7d`). */
export function sinceQuery(c: Context<ApiEnv>, now: Date): string | undefined {
  const v = c.req.query('since');
  if (v === undefined || v === '') return undefined;
  const d = /^([0-9]{1,6})(s|m|h|d)$/.exec(v);
  if (d) {
    const unit = { s: 1e3, m: 60e3, h: 3600e3, d: 86400e3 }[d[2] as 's' | 'm' | 'h' | 'd'];
    return new Date(now.getTime() - Number(d[1]) * unit).toISOString();
  }
  const t = Date.parse(v);
  if (!/^\d{4}-\d{2}-\d{2}/.test(v) || Number.isNaN(t))
    throw badRequest('since must be an ISO 8601 time or a duration like 15m, 2h, 7d');
  return new Date(t).toISOString();
}

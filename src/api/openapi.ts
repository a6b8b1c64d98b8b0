/**
 * The OpenAPI 3.1 document, served at /api/openapi.json. Written from a route table rather than
 * generated from validators: the handlers validate by hand (small, no schema library in workerd),
 * and a test checks that every route the app registers is listed here and vice versa.
 */
import { ERROR_STATUS } from '../errors.js';
import { DIFF_LIMIT_DEFAULT, DIFF_LIMIT_MAX, DIFF_MAX_BYTES } from './diff-bound.js';

export interface RouteDoc {
  readonly method: 'get' | 'post';
  /** Hono path (`:param`). */
  readonly path: string;
  readonly summary: string;
  readonly write?: boolean;
  readonly query?: readonly { name: string; description: string; required?: boolean }[];
  /** Body fields: name → description (required ones end in `!`). */
  readonly body?: Readonly<Record<string, string>>;
  /** Heavy work (compile, diff): may answer 503 busy or 500 worker_failed when run off the event loop. */
  readonly heavy?: boolean;
}

const V = '/api/v1';
const versionParam =
  'version: a number, "latest", "tag:NAME", a tag name or "candidate:N" (malformed: 400; naming nothing: 404)';

export const ROUTES: readonly RouteDoc[] = [
  {
    method: 'get',
    path: `${V}/channels`,
    summary: 'Channels with their current, pinned, tagged and candidate versions',
  },
  {
    method: 'get',
    path: `${V}/channels/:ch/snapshots`,
    summary: 'Versions of a channel, newest first, with status (current, candidate, pinned, tags)',
    query: [
      { name: 'limit', description: 'page size, 1..200 (default 20)' },
      { name: 'cursor', description: 'nextCursor of the previous page' },
    ],
  },
  {
    method: 'get',
    path: `${V}/channels/:ch/snapshots/:v`,
    summary: `One version record with provenance and counts (${versionParam})`,
  },
  { method: 'get', path: `${V}/channels/:ch/snapshots/:v/diagnostics`, summary: 'A version’s diagnostics' },
  {
    method: 'get',
    path: `${V}/channels/:ch/snapshots/:v/inputs`,
    summary: 'The stored inputs manifest and its objects',
  },
  {
    method: 'get',
    path: `${V}/channels/:ch/snapshots/:v/config`,
    summary: 'What a node is served (config_dump JSON, as `meshsnap show`)',
    query: [
      { name: 'node', description: 'proxy node id', required: true },
      { name: 'metadata', description: 'node metadata, a JSON object' },
      { name: 'type', description: 'clusters, endpoints, listeners, routes (comma list)' },
    ],
  },
  {
    method: 'get',
    path: `${V}/channels/:ch/snapshots/:v/explain`,
    summary:
      'Where a request from a proxy goes (listener, filter chain, HTTP filters, route config, virtual host, route, clusters, endpoints) and which Istio objects put it there, as `meshsnap explain`',
    query: [
      { name: 'node', description: 'proxy node id (or pod)' },
      { name: 'metadata', description: 'node metadata, a JSON object' },
      { name: 'pod', description: 'NAMESPACE/NAME of a pod of the stored inputs: its sidecar (instead of node)' },
      { name: 'to', description: 'HOST:PORT the request goes to', required: true },
      { name: 'path', description: 'request path with query string (default /)' },
      { name: 'method', description: 'request method (default GET)' },
      { name: 'header', description: 'NAME=VALUE, repeatable' },
      { name: 'tls', description: 'true: the client speaks TLS (inbound: Istio mTLS)' },
      { name: 'sni', description: 'TLS server name (implies tls)' },
      { name: 'protocol', description: 'http (default), h2c, h2 or tcp' },
      { name: 'inbound', description: 'true: a call into the proxy’s workload' },
      {
        name: 'across',
        description: `A..B (selectors): ask every version from A to B (at most 100) and report where the answer changed; the path's version is not used`,
      },
    ],
  },
  {
    method: 'get',
    path: `${V}/channels/:ch/diff`,
    summary: 'Semantic diff between two versions (resources per class and type, and inputs)',
    heavy: true,
    query: [
      { name: 'from', description: versionParam, required: true },
      { name: 'to', description: versionParam, required: true },
      { name: 'node', description: 'limit to what this node is served' },
      { name: 'metadata', description: 'node metadata, a JSON object' },
      { name: 'type', description: 'xDS types (comma list)' },
      {
        name: 'limit',
        description: `most resources and input changes listed (default ${DIFF_LIMIT_DEFAULT}, at most ${DIFF_LIMIT_MAX}); beyond it, or beyond ${DIFF_MAX_BYTES / 1024 / 1024} MiB of field changes, the answer says truncated: true with the counts left out`,
      },
    ],
  },
  {
    method: 'get',
    path: `${V}/audit`,
    summary: 'The audit log, newest first: operations (who, when, why) and relay ACK/NACKs',
    query: [
      { name: 'since', description: 'ISO 8601 time or a duration (15m, 2h, 7d)' },
      { name: 'proxy', description: 'node id' },
      { name: 'channel', description: 'channel name' },
      { name: 'limit', description: 'at most this many entries (default 1000)' },
    ],
  },
  {
    method: 'get',
    path: `${V}/proxies`,
    summary: 'Proxies with the version each ACKed per type and their last NACK',
    query: [
      { name: 'channel', description: 'channel name' },
      { name: 'since', description: 'only records after this time' },
    ],
  },
  {
    method: 'post',
    path: `${V}/channels/:ch/compile`,
    summary: 'Compile input files and publish (a candidate while pinned)',
    write: true,
    heavy: true,
    body: {
      'files!': 'array of { file, text } (YAML or JSON)',
      strict: 'boolean: any error diagnostic fails with 400',
      dryRun: 'boolean: store nothing',
      reason: 'why',
    },
  },
  {
    method: 'post',
    path: `${V}/channels/:ch/rollback`,
    summary: 'Recompile an earlier version’s config with current endpoints, publish and pin',
    write: true,
    body: { 'version!': versionParam, 'reason!': 'why' },
  },
  {
    method: 'post',
    path: `${V}/channels/:ch/pin`,
    summary: 'Pin the served config (config changes become candidates)',
    write: true,
    body: { 'reason!': 'why' },
  },
  { method: 'post', path: `${V}/channels/:ch/unpin`, summary: 'Unpin', write: true, body: { reason: 'why' } },
  {
    method: 'post',
    path: `${V}/channels/:ch/promote`,
    summary: 'Serve a candidate',
    write: true,
    body: { 'version!': versionParam, 'reason!': 'why' },
  },
  {
    method: 'post',
    path: `${V}/channels/:ch/tags`,
    summary: 'Name a version',
    write: true,
    body: { 'version!': versionParam, 'name!': 'tag name (starts with a letter)', reason: 'why' },
  },
  {
    method: 'post',
    path: `${V}/gc`,
    summary:
      'Retention over the whole store (as `meshsnap gc`): keeps the newest N, recent, tagged, pinned and head versions, deletes the other records and what nothing kept references; answers the GcResult with action "gc"',
    write: true,
    body: {
      keep: 'whole number ≥ 1: newest versions kept per channel (default 10)',
      keepDays: 'number ≥ 0: versions younger than this many days are kept too',
      graceMinutes:
        'number ≥ 0: nothing written or reused this recently is deleted (default 60; not shorter than the store’s freshen interval)',
      dryRun: 'boolean: report, delete nothing',
      reason: 'why (in the audit record)',
    },
  },
];

const ERROR_SCHEMA = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', enum: Object.keys(ERROR_STATUS) },
        message: { type: 'string' },
        diagnostics: { type: 'array', items: { type: 'object' } },
      },
    },
  },
};

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

const openApiPath = (p: string): string => p.replace(/:([A-Za-z]+)/g, '{$1}');

function operation(r: RouteDoc, readsOpen: boolean) {
  const params = [...r.path.matchAll(/:([A-Za-z]+)/g)].map((m) => ({
    name: m[1],
    in: 'path',
    required: true,
    schema: { type: 'string' },
    description: m[1] === 'ch' ? 'channel' : versionParam,
  }));
  const query = (r.query ?? []).map((q) => ({
    name: q.name,
    in: 'query',
    required: q.required ?? false,
    schema: { type: 'string' },
    description: q.description,
  }));
  const requiredFields = Object.keys(r.body ?? {})
    .filter((k) => k.endsWith('!'))
    .map((k) => k.slice(0, -1));
  const body = r.body
    ? {
        // An empty body is `{}`: only a body with a required field is itself required.
        required: requiredFields.length > 0,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: requiredFields,
              properties: Object.fromEntries(
                Object.entries(r.body).map(([k, d]) => [k.replace(/!$/, ''), { description: d }]),
              ),
            },
          },
        },
      }
    : undefined;
  const secured = r.write === true || !readsOpen;
  return {
    summary: r.summary,
    operationId: `${r.method}${openApiPath(r.path)
      .replace(/^\/api\/v1/, '')
      .replace(/[{}]/g, '')
      .replace(/\/(\w)/g, (_m, ch: string) => ch.toUpperCase())}`,
    parameters: [...params, ...query],
    ...(body ? { requestBody: body } : {}),
    ...(secured ? { security: [{ bearer: [] }] } : { security: [] }),
    responses: {
      [r.method === 'post' && r.path.endsWith('/tags') ? '201' : '200']: {
        description: 'OK',
        content: { 'application/json': { schema: { type: 'object' } } },
      },
      '400': errorResponse('bad input (code bad_request, or invalid_inputs with diagnostics)'),
      ...(secured
        ? { '401': errorResponse('missing or invalid token'), '403': errorResponse('token may not do this') }
        : {}),
      '404': errorResponse(r.path.includes(':ch') ? 'unknown channel, version, tag or candidate' : 'unknown route'),
      ...(r.write
        ? {
            '409': errorResponse('conflicts with the channel state'),
            '413': errorResponse('request body larger than the limit (code payload_too_large)'),
          }
        : {}),
      '500': errorResponse(
        `a fault of the server or its store (code internal; no stack or server path in the message)${r.heavy ? ', or the worker running it died (code worker_failed)' : ''}`,
      ),
      '503': errorResponse(
        `the store stayed unreachable (code unavailable)${r.heavy ? ', or too much heavy work is queued (code busy, with Retry-After)' : ''}`,
      ),
    },
  };
}

export function openApiDocument(opts: { readsOpen: boolean; version: string }) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of ROUTES) (paths[openApiPath(r.path)] ??= {})[r.method] = operation(r, opts.readsOpen);
  return {
    openapi: '3.1.0',
    info: {
      title: 'meshsnap API',
      version: opts.version,
      description: 'Snapshots, history and audit of a meshsnap store. Writes need Authorization: Bearer <token>.',
    },
    paths,
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } }, schemas: { Error: ERROR_SCHEMA } },
  };
}

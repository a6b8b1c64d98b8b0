/** The OpenAPI document: valid JSON, OpenAPI 3.1, and it lists exactly the routes the app serves. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { createApp } from '../../src/api/app.js';
import { LocalStore } from '../../src/snapshot/store/local.js';

const tmp = mkdtempSync(join(tmpdir(), 'meshsnap-openapi-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

test('served at /api/openapi.json, listing every /api/v1 route with its method, and nothing else', async () => {
  const app = createApp({ store: new LocalStore(tmp), auth: { writeToken: 't' } });
  const res = await app.request('/api/openapi.json');
  assert.equal(res.status, 200);
  const doc = JSON.parse(await res.text()) as {
    openapi: string;
    paths: Record<
      string,
      Record<string, { security: unknown[]; responses: Record<string, unknown>; operationId: string }>
    >;
    components: { securitySchemes: unknown };
  };
  assert.equal(doc.openapi, '3.1.0');
  assert.ok(doc.components.securitySchemes);

  const registered = new Set(
    app.routes
      .filter((r) => r.path.startsWith('/api/v1/') && r.method !== 'ALL')
      .map((r) => `${r.method.toLowerCase()} ${r.path.replace(/:([A-Za-z]+)/g, '{$1}')}`),
  );
  const documented = new Set(Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m} ${p}`)));
  assert.deepEqual([...documented].sort(), [...registered].sort());
  assert.equal(registered.size, 17);

  const ids = new Set<string>();
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      assert.ok(!ids.has(op.operationId), `duplicate operationId ${op.operationId}`);
      ids.add(op.operationId);
      assert.ok(op.responses['400'], `${method} ${path} documents 400`);
      // Writes are secured; with open reads, reads are not.
      assert.equal(op.security.length > 0, method === 'post', `${method} ${path} security`);
    }
  }
});

test('POST /api/v1/gc is documented: secured, every body field optional', async () => {
  const app = createApp({ store: new LocalStore(tmp), auth: { writeToken: 't' } });
  const doc = (await (await app.request('/api/openapi.json')).json()) as {
    paths: Record<
      string,
      Record<
        string,
        {
          operationId: string;
          security: unknown[];
          responses: Record<string, unknown>;
          requestBody?: {
            required: boolean;
            content: Record<string, { schema: { required: string[]; properties: Record<string, unknown> } }>;
          };
        }
      >
    >;
  };
  const op = doc.paths['/api/v1/gc']?.post;
  assert.ok(op, 'POST /api/v1/gc is in the document');
  assert.equal(op.operationId, 'postGc');
  assert.deepEqual(op.security, [{ bearer: [] }]);
  assert.ok(op.responses['401'] && op.responses['400']);
  const body = op.requestBody;
  assert.ok(body);
  assert.equal(body.required, false, 'an empty body runs gc with the defaults');
  const schema = body.content['application/json']?.schema;
  assert.deepEqual(schema?.required, []);
  assert.deepEqual(Object.keys(schema?.properties ?? {}).sort(), [
    'dryRun',
    'graceMinutes',
    'keep',
    'keepDays',
    'reason',
  ]);
  // A body with a required field stays required.
  assert.equal(doc.paths['/api/v1/channels/{ch}/rollback']?.post?.requestBody?.required, true);
});

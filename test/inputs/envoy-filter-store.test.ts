/**
 * An EnvoyFilter refused for inline secret material (test/inputs/envoy-filter.test.ts) is never
 * stored: its stored form is redacted, and no byte of a store a compile published holds the secret.
 * Apart from envoy-filter.test.ts: this one runs the whole compile and publish.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { publishCompiled } from '../../src/history/publish.js';
import { retainedForStorage } from '../../src/inputs/retain.js';
import { compileTexts } from '../../src/pipeline.js';
import { storedDocument } from '../../src/snapshot/stored-inputs/index.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { tempStore } from '../history/helpers.js';

const SECRET = 'TOPSECRETKEYMATERIAL';
/** A cluster patch whose upstream TLS context holds a private key inline. */
const LEAKY = `apiVersion: networking.istio.io/v1alpha3
kind: EnvoyFilter
metadata: { name: leaky, namespace: ns1 }
spec:
  configPatches:
  - applyTo: CLUSTER
    patch:
      operation: MERGE
      value:
        transport_socket:
          name: envoy.transport_sockets.tls
          typed_config:
            "@type": type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext
            common_tls_context:
              tls_certificates:
              - private_key: { inline_string: ${SECRET} }
`;

/** Every file under `dir`, as text. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...filesUnder(p));
    else out.push(readFileSync(p, 'latin1'));
  }
  return out;
}

test('a refused secret is never stored: the stored form is redacted, and no stored byte holds it', async () => {
  const text = LEAKY;
  const raw = parseAllDocuments(text)[0]!.toJSON() as Record<string, unknown>;
  const kept = retainedForStorage(raw);
  assert.ok(kept);
  assert.doesNotMatch(JSON.stringify(kept), new RegExp(SECRET));
  assert.deepEqual(JSON.parse(JSON.stringify(kept)).metadata, { name: 'leaky', namespace: 'ns1' });
  assert.doesNotMatch(JSON.stringify(storedDocument(raw, nodeSha256Hex)), new RegExp(SECRET));

  // The whole path `meshsnap compile --store` takes: compile, publish, every file of the store.
  const { store, dir, cleanup } = tempStore();
  try {
    const r = compileTexts([{ file: 'ef.yaml', text }], { hasher: nodeSha256Hex });
    assert.ok(r.diagnostics.some((d) => d.code === 'inline-secret'));
    const published = await publishCompiled(
      store,
      'main',
      { snapshot: r.snapshot, diagnostics: r.diagnostics, stored: r.stored },
      {},
      new Date().toISOString(),
    );
    assert.equal(published.status, 'published');
    const files = filesUnder(dir);
    assert.ok(files.length > 0);
    const b64 = Buffer.from(SECRET).toString('base64').slice(0, 16);
    for (const f of files) {
      assert.ok(!f.includes(SECRET), 'the secret is in a stored file');
      assert.ok(!f.includes(b64), 'the secret (base64) is in a stored file');
    }
  } finally {
    cleanup();
  }
});

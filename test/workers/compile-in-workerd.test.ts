/**
 * The compile function runs unchanged in Cloudflare workerd: the Worker (functions/cloudflare/
 * worker.ts) is bundled for plain workerd (no nodejs_compat), run in real workerd through
 * Miniflare, and its POST /compile — the watcher's `--compile-url` wire format — is driven by the
 * watcher's own client (RemoteCompiler, which re-digests everything it gets). The snapshot must be
 * the very one Node computes for the same files.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Miniflare } from 'miniflare';
import { compileTexts, parseTexts, type InputText } from '../../src/pipeline.js';
import type { CompileResult } from '../../src/watch/compiler.js';
import { RemoteCompiler } from '../../src/watch/remote-compile.js';
import { COMPILE_REQUEST_SCHEMA } from '../../src/watch/remote-protocol.js';
import { BASE_PATHS, nodeHasher, readInputs, REVIEWS_50_V3 } from '../functions/bookinfo.js';
import { REPO } from '../helpers/paths.js';
import { bundleWorker, findDynamicCode, type WorkerBundle } from './bundle.js';

// What wrangler.toml says; the test runs the Worker under the same date.
const COMPATIBILITY_DATE = '2025-09-01';

let dir: string;
let bundle: WorkerBundle;
let mf: Miniflare | undefined;
let files: InputText[];

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'meshsnap-workerd-'));
  bundle = await bundleWorker(join(REPO, 'functions', 'cloudflare', 'worker.ts'), dir, REPO);
  files = await readInputs([...BASE_PATHS, REVIEWS_50_V3]);
  // modulesRoot: module names are paths relative to it, and workerd refuses names with '..'.
  mf = new Miniflare({
    modules: true,
    modulesRoot: dir,
    scriptPath: bundle.path,
    compatibilityDate: COMPATIBILITY_DATE,
    r2Buckets: ['MESHSNAP_BUCKET'],
    bindings: { MESHSNAP_WRITE_TOKEN: 'unused-here' },
  });
  await mf.ready;
});

after(async () => {
  await mf?.dispose();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The watcher's client, talking to the Worker through Miniflare instead of the network. */
function remote(): RemoteCompiler {
  assert.ok(mf, 'miniflare did not start');
  const m = mf;
  const viaWorkerd = (async (url: string | URL | Request, init?: RequestInit) => {
    const { signal: _signal, ...rest } = init ?? {};
    return (await m.dispatchFetch(String(url), rest as never)) as unknown as Response;
  }) as typeof fetch;
  return new RemoteCompiler('http://worker.test/compile', { hasher: nodeHasher, fetch: viaWorkerd });
}

async function compileInWorker(texts: readonly InputText[]): Promise<CompileResult> {
  const objects = parseTexts(texts).documents.map((d) => ({ object: d.object }));
  return remote().compile({ objects: objects as never, changed: new Set() });
}

test('the bundle pulls in our code and third-party code only, no Node built-ins', { timeout: 30_000 }, () => {
  assert.ok(bundle.inputs.includes('src/compile/index.ts'), 'compiler is bundled');
  assert.ok(bundle.inputs.includes('src/api/app.ts'), 'the API app is bundled');
  assert.ok(bundle.inputs.includes('src/snapshot/store/r2.ts'), 'the R2 store is bundled');
  assert.deepEqual(
    bundle.inputs.filter((p) => p.startsWith('node:') || p.includes('(disabled)')),
    [],
  );
  assert.ok(!bundle.inputs.some((p) => p.includes('@aws-sdk')), 'no AWS SDK in the Worker');
});

test('no new Function or eval anywhere in the bundle', { timeout: 30_000 }, () => {
  // protobufjs 8's minimal runtime reads globalThis.Buffer directly; older ones reached Node modules
  // through @protobufjs/inquire's guarded `eval("require")`, which would be listed here.
  assert.deepEqual(findDynamicCode(bundle.text), []);
  assert.ok(!/\bFunction\s*\(\s*["'`]/.test(bundle.text), 'no Function("…") constructor calls');
});

test(
  'workerd compiles bookinfo to the same snapshot as Node, checked by the watcher client',
  { timeout: 60_000 },
  async () => {
    const inNode = compileTexts(files, { hasher: nodeHasher });
    // Posted in reverse order: the result must not depend on it.
    const inWorker = await compileInWorker([...files].reverse());
    assert.equal(inWorker.mode, 'remote');
    assert.match(inWorker.snapshot.digest, /^sha256:[0-9a-f]{64}$/);
    assert.equal(inWorker.snapshot.digest, inNode.snapshot.digest);
    assert.equal(inWorker.snapshot.inputsDigest, inNode.snapshot.inputsDigest);
    assert.deepEqual(inWorker.snapshot.counts, inNode.snapshot.counts);
    assert.equal(inWorker.snapshot.objects.size, inNode.snapshot.objects.size);
    for (const type of ['clusters', 'endpoints', 'listeners', 'routes', 'classes', 'objects'] as const) {
      assert.ok(inWorker.snapshot.counts[type] > 0, `${type} count is ${inWorker.snapshot.counts[type]}`);
    }
  },
);

test('dropping the DestinationRules in workerd drops their subset clusters', { timeout: 60_000 }, async () => {
  const withoutRules = files.filter((f) => f.file !== 'destination-rule-all.yaml');
  assert.equal(withoutRules.length, files.length - 1);
  const [fewer, all] = [await compileInWorker(withoutRules), await compileInWorker(files)];
  assert.ok(
    fewer.snapshot.counts.clusters < all.snapshot.counts.clusters,
    `clusters without rules ${fewer.snapshot.counts.clusters}, with ${all.snapshot.counts.clusters}`,
  );
  assert.equal(fewer.snapshot.digest, compileTexts(withoutRules, { hasher: nodeHasher }).snapshot.digest);
});

test('POST /compile rejects a body that is not a compile request, with a 400', { timeout: 30_000 }, async () => {
  assert.ok(mf);
  for (const body of ['{"file":"x.yaml"}', 'not json', JSON.stringify({ schema: 'other/v1', objects: [] })]) {
    const res = await mf.dispatchFetch('http://worker.test/compile', {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(res.status, 400, body);
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'bad_request');
  }
  const empty = await mf.dispatchFetch('http://worker.test/compile', {
    method: 'POST',
    body: JSON.stringify({ schema: COMPILE_REQUEST_SCHEMA, objects: [] }),
  });
  assert.equal(empty.status, 200, 'no objects compiles to the empty mesh');
});

test(
  'EnvoyFilters (a Lua filter by @type, a cluster MERGE, a route MERGE) compile in workerd to the same snapshot as in Node',
  { timeout: 60_000 },
  async () => {
    const envoyFilters: InputText = {
      file: 'envoy-filters.yaml',
      text: `apiVersion: networking.istio.io/v1alpha3
kind: EnvoyFilter
metadata: { name: lua-inbound, namespace: istio-system }
spec:
  configPatches:
  - applyTo: HTTP_FILTER
    match:
      context: SIDECAR_INBOUND
      listener: { filterChain: { filter: { name: envoy.filters.network.http_connection_manager, subFilter: { name: envoy.filters.http.router } } } }
    patch:
      operation: INSERT_BEFORE
      value:
        name: envoy.lua
        typed_config:
          "@type": type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua
          inlineCode: "function envoy_on_request(h) end"
  - applyTo: CLUSTER
    match: { context: SIDECAR_OUTBOUND, cluster: { service: ratings.default.svc.cluster.local } }
    patch: { operation: MERGE, value: { connectTimeout: 1.5s } }
  - applyTo: ROUTE_CONFIGURATION
    match: { context: SIDECAR_OUTBOUND, routeConfiguration: { portNumber: 9080 } }
    patch: { operation: MERGE, value: { response_headers_to_add: [{ header: { key: x-patched, value: "1" } }] } }
`,
    };
    const inNode = compileTexts([...files, envoyFilters], { hasher: nodeHasher });
    assert.deepEqual(
      inNode.diagnostics.filter((d) => d.kind === 'EnvoyFilter'),
      [],
    );
    assert.notEqual(inNode.snapshot.digest, compileTexts(files, { hasher: nodeHasher }).snapshot.digest);
    const inWorker = await compileInWorker([envoyFilters, ...files]);
    assert.equal(inWorker.snapshot.digest, inNode.snapshot.digest);
    assert.deepEqual(inWorker.snapshot.counts, inNode.snapshot.counts);
  },
);

test(
  'Telemetry tracing (an OpenTelemetry provider over HTTP, a mesh-wide Telemetry) compiles in workerd to the same snapshot as in Node',
  { timeout: 60_000 },
  async () => {
    const tracing: InputText = {
      file: 'tracing.yaml',
      text: `apiVersion: v1
kind: Service
metadata: { name: otel-collector, namespace: istio-system }
spec: { clusterIP: 10.96.50.2, ports: [{ name: http-otlp, port: 4318 }], selector: { app: otel } }
---
apiVersion: meshsnap.dev/v1alpha1
kind: MeshConfig
metadata: { name: mesh }
spec:
  extensionProviders:
  - name: otel
    opentelemetry:
      service: otel-collector.istio-system.svc.cluster.local
      port: 4318
      http: { path: /v1/traces, timeout: 3s, headers: [{ name: x-scope-orgid, value: tenant-1 }] }
---
apiVersion: telemetry.istio.io/v1
kind: Telemetry
metadata: { name: mesh-default, namespace: istio-system }
spec:
  tracing: [{ providers: [{ name: otel }], randomSamplingPercentage: 10, useRequestIdForTraceSampling: false }]
`,
    };
    const inNode = compileTexts([...files, tracing], { hasher: nodeHasher });
    assert.deepEqual(
      inNode.diagnostics.filter((d) => d.severity !== 'info' && (d.kind === 'Telemetry' || d.kind === 'MeshConfig')),
      [],
    );
    assert.notEqual(inNode.snapshot.digest, compileTexts(files, { hasher: nodeHasher }).snapshot.digest);
    const inWorker = await compileInWorker([tracing, ...files]);
    assert.equal(inWorker.snapshot.digest, inNode.snapshot.digest);
    assert.deepEqual(inWorker.snapshot.counts, inNode.snapshot.counts);
  },
);

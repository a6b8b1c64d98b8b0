/** The bundled example mesh compiles cleanly and shows the features examples/README.md promises. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { compile } from '../../src/compile/index.js';
import { buildInputSet, parseDocuments, type RawDocument } from '../../src/inputs/index.js';
import { EXAMPLES } from '../helpers/paths.js';

const DIR = join(EXAMPLES, 'bookstore');

function yamlFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((n) =>
      statSync(join(dir, n)).isDirectory() ? yamlFiles(join(dir, n)) : n.endsWith('.yaml') ? [join(dir, n)] : [],
    );
}

function load() {
  const docs: RawDocument[] = [];
  const parseDiagnostics = [];
  for (const f of yamlFiles(DIR)) {
    const r = parseDocuments(readFileSync(f, 'utf8'), relative(DIR, f));
    docs.push(...r.docs);
    parseDiagnostics.push(...r.diagnostics);
  }
  const inputs = buildInputSet(docs);
  return { inputs, parseDiagnostics, ...compile(inputs) };
}

test('the bookstore compiles without errors or warnings', () => {
  const { parseDiagnostics, diagnostics, inputs } = load();
  assert.deepEqual(parseDiagnostics, []);
  assert.deepEqual(
    diagnostics.filter((d) => d.severity !== 'info'),
    [],
  );
  assert.equal(inputs.services.length, 5);
  assert.deepEqual(inputs.namespaces.map((n) => n.meta.name).sort(), ['payments', 'shop']);
  assert.equal(inputs.meshConfig.outboundTrafficPolicy, 'REGISTRY_ONLY');
  assert.equal(inputs.meshConfig.connectTimeoutMs, 5000);
});

test('catalog: subsets, 90/10 split behind a header-matched canary route, ring hash', () => {
  const { output } = load();
  const clusters = output.groups.get('outbound')?.clusters;
  const v1 = clusters?.get('outbound|9080|v1|catalog.shop.svc.cluster.local');
  assert.ok(v1 && clusters?.has('outbound|9080|v2|catalog.shop.svc.cluster.local'));
  assert.ok(v1.outlier_detection, 'outlier detection from the DestinationRule');
  assert.ok(v1.circuit_breakers, 'connection pool limits from the DestinationRule');

  const vhost = output.groups
    .get('routes/shop')
    ?.routes.get('9080')
    ?.virtual_hosts?.find((v) => v.name === 'catalog.shop.svc.cluster.local:9080');
  assert.ok(vhost?.routes);
  const [canary, split] = vhost.routes;
  assert.equal(canary?.match?.headers?.[0]?.name, 'x-canary');
  const weights = split?.route?.weighted_clusters?.clusters?.map((c) => [c.name, c.weight?.value]);
  assert.deepEqual(weights, [
    ['outbound|9080|v1|catalog.shop.svc.cluster.local', 90],
    ['outbound|9080|v2|catalog.shop.svc.cluster.local', 10],
  ]);
  assert.equal(split?.route?.retry_policy?.num_retries?.value, 3);
});

test("cart gets fault injection; postgres a TCP listener; endpoints carry their zones, the proxy's first", () => {
  const { output } = load();
  const cart = output.groups
    .get('routes/shop')
    ?.routes.get('50051')
    ?.virtual_hosts?.find((v) => v.name === 'cart.shop.svc.cluster.local:50051');
  assert.ok(Object.keys(cart?.routes?.[0]?.typed_per_filter_config ?? {}).includes('envoy.filters.http.fault'));
  assert.ok(output.groups.get('outbound-listeners')?.listeners.has('10.96.41.21_5432'));
  // catalog's rule has outlier detection: with Istio's default mesh localityLbSetting its assignments
  // depend on the proxy's zone (endpoints@: a proxy of no known zone; endpoints@<zone>: its own first).
  const catalog = 'outbound|9080|v1|catalog.shop.svc.cluster.local';
  const zones = (group: string) =>
    output.groups
      .get(group)
      ?.endpoints.get(catalog)
      ?.endpoints?.map((l) => [l.locality?.zone, l.priority ?? 0]);
  assert.deepEqual(zones('endpoints@'), [
    ['eu-west1-b', 0],
    ['eu-west1-c', 0],
  ]);
  assert.deepEqual(zones('endpoints@eu-west1/eu-west1-c/'), [
    ['eu-west1-b', 1],
    ['eu-west1-c', 0],
  ]);
});

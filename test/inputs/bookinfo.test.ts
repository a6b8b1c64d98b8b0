/** The real Istio bookinfo sample and the derived cluster state load cleanly. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildInputSet } from '../../src/inputs/load.js';
import { parseDocuments, type RawDocument } from '../../src/inputs/parse.js';
import type { Diagnostic } from '../../src/model/diagnostics.js';
import { BOOKINFO_STATE, ISTIO_SAMPLES } from '../helpers/paths.js';

const BOOKINFO_KUBE = join(ISTIO_SAMPLES, 'bookinfo', 'platform', 'kube', 'bookinfo.yaml');
const NETWORKING = join(ISTIO_SAMPLES, 'bookinfo', 'networking');

function load(files: string[]): ReturnType<typeof buildInputSet> {
  const docs: RawDocument[] = [];
  const diags: Diagnostic[] = [];
  for (const f of files) {
    const p = parseDocuments(readFileSync(f, 'utf8'), f);
    docs.push(...p.docs);
    diags.push(...p.diagnostics);
  }
  const inputs = buildInputSet(docs);
  return { ...inputs, diagnostics: [...diags, ...inputs.diagnostics] };
}

const errorsOf = (ds: readonly Diagnostic[]): Diagnostic[] => ds.filter((d) => d.severity === 'error');

test('bookinfo.yaml: services read, Deployments and ServiceAccounts are info only', () => {
  const inputs = load([BOOKINFO_KUBE]);
  assert.deepEqual(errorsOf(inputs.diagnostics), []);
  assert.deepEqual(
    inputs.diagnostics.filter((d) => d.severity === 'warning'),
    [],
  );
  assert.deepEqual(
    inputs.services.map((s) => s.meta.name),
    ['details', 'productpage', 'ratings', 'reviews'],
  );
  const reviews = inputs.services.find((s) => s.meta.name === 'reviews')!;
  assert.equal(reviews.meta.namespace, 'default');
  assert.equal(reviews.type, 'ClusterIP');
  assert.deepEqual(reviews.ports, [{ name: 'http', port: 9080, targetPort: 9080, protocol: 'TCP' }]);
  assert.deepEqual(reviews.selector, { app: 'reviews' });
  assert.ok(
    inputs.diagnostics.some((d) => d.code === 'ignored-kind' && d.kind === 'Deployment' && d.name === 'reviews-v3'),
  );
});

test('cluster state: pods, slices and services with their facts', () => {
  const inputs = load([BOOKINFO_STATE]);
  assert.deepEqual(errorsOf(inputs.diagnostics), []);
  assert.equal(inputs.services.length, 5);
  assert.equal(inputs.pods.length, 7);
  const slice = inputs.endpointSlices.find((s) => s.serviceName === 'reviews')!;
  assert.deepEqual(
    slice.endpoints.map((e) => [e.addresses, e.ready, e.serving, e.terminating]),
    [
      [['10.244.0.13'], true, true, false],
      [['10.244.0.14'], true, true, false],
      [['10.244.0.15'], true, true, false],
    ],
  );
  const pod = inputs.pods.find((p) => p.meta.name === 'reviews-v2-5f6d7c8b9-abcde')!;
  assert.deepEqual(
    [pod.ips, pod.ready, pod.phase, pod.serviceAccount, pod.nodeName],
    [['10.244.0.14'], true, 'Running', 'bookinfo-reviews', 'node-1'],
  );
  assert.deepEqual(pod.containerPorts, [{ containerPort: 9080, protocol: 'TCP' }]);
  const gw = inputs.services.find((s) => s.meta.name === 'istio-ingressgateway')!;
  assert.deepEqual([gw.type, gw.clusterIP, gw.clusterIPs], ['LoadBalancer', '10.96.20.1', ['10.96.20.1']]);
});

for (const file of readdirSync(NETWORKING)
  .filter((f) => f.endsWith('.yaml'))
  .sort()) {
  test(`networking sample ${file}: no errors with the cluster state`, () => {
    const inputs = load([BOOKINFO_STATE, join(NETWORKING, file)]);
    assert.deepEqual(errorsOf(inputs.diagnostics), []);
    const text = readFileSync(join(NETWORKING, file), 'utf8');
    const kinds = parseDocuments(text, file).docs.map((d) => d.object['kind']);
    assert.equal(inputs.virtualServices.length, kinds.filter((k) => k === 'VirtualService').length);
    assert.equal(inputs.destinationRules.length, kinds.filter((k) => k === 'DestinationRule').length);
    assert.equal(inputs.gateways.length, kinds.filter((k) => k === 'Gateway').length);
    assert.equal(inputs.serviceEntries.length, kinds.filter((k) => k === 'ServiceEntry').length);
    assert.equal(inputs.diagnostics.filter((d) => d.code === 'unsupported-kind').length, 0);
  });
}

test('networking samples translate durations, weights, faults and subsets', () => {
  const get = (file: string): ReturnType<typeof load> => load([join(NETWORKING, file)]);
  const delay = get('virtual-service-ratings-test-delay.yaml').virtualServices[0]!;
  assert.deepEqual(delay.spec.http?.[0]?.fault, { delay: { fixedDelayMs: 7000, percentage: { value: 100 } } });
  assert.deepEqual(delay.spec.http?.[0]?.match?.[0]?.headers, { 'end-user': { exact: 'jason' } });
  const abort = get('virtual-service-ratings-test-abort.yaml').virtualServices[0]!;
  assert.equal(abort.spec.http?.[0]?.fault?.abort?.httpStatus, 500);
  const split = get('virtual-service-reviews-80-20.yaml').virtualServices[0]!;
  assert.deepEqual(
    split.spec.http?.[0]?.route?.map((r) => [r.destination.subset, r.weight]),
    [
      ['v1', 80],
      ['v2', 20],
    ],
  );
  const mtls = get('destination-rule-all-mtls.yaml').destinationRules.find((d) => d.meta.name === 'reviews')!;
  assert.equal(mtls.spec.trafficPolicy?.tls?.mode, 'ISTIO_MUTUAL');
  assert.deepEqual(
    mtls.spec.subsets?.map((s) => s.labels?.['version']),
    ['v1', 'v2', 'v3'],
  );
  assert.equal(mtls.apiVersion, 'networking.istio.io/v1');
});

/**
 * Fuzz of the whole compiler (inputs → compile → consistency check → snapshot) with random but
 * mostly well-formed Istio objects: unknown hosts and subsets, wildcard hosts, odd ports, odd
 * weights, regexes, several VirtualServices for one host, subsets selecting nothing. The pipeline
 * must never throw (an InconsistentSnapshotError would mean the compiler produced a dangling
 * reference) and must finish quickly.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { stringify } from 'yaml';
import { compileTexts, type InputText } from '../../src/pipeline.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { mulberry32, pick, type Rand } from '../inputs/prng.js';
import { BOOKINFO_STATE } from '../helpers/paths.js';

const HOSTS = [
  'reviews',
  'ratings',
  'details',
  'productpage',
  'reviews.default',
  'ratings.default.svc.cluster.local',
  'nowhere',
  '*.default.svc.cluster.local',
  '*',
  'istio-ingressgateway.istio-system.svc.cluster.local',
];
const SUBSETS = ['v1', 'v2', 'v3', 'v9', ''];
const PORTS = [undefined, 9080, 80, 15021, 8080];
const MATCHES = [{ prefix: '/' }, { exact: '/a' }, { regex: '/r[0-9]+' }, { regex: '(?i)/x' }, { prefix: '' }];

function destination(rand: Rand): Record<string, unknown> {
  const d: Record<string, unknown> = { host: pick(rand, HOSTS) };
  const subset = pick(rand, SUBSETS);
  if (subset) d.subset = subset;
  const port = pick(rand, PORTS);
  if (port !== undefined) d.port = { number: port };
  return d;
}

function httpRoute(rand: Rand): Record<string, unknown> {
  const r: Record<string, unknown> = {};
  if (rand() < 0.6)
    r.match = [
      {
        uri: pick(rand, MATCHES),
        ...(rand() < 0.3 ? { headers: { 'x-u': { exact: 'a' } } } : {}),
        ...(rand() < 0.2 ? { port: pick(rand, [9080, 1]) } : {}),
      },
    ];
  const kind = rand();
  if (kind < 0.75) {
    const n = 1 + Math.floor(rand() * 3);
    const weights =
      n === 1
        ? [undefined]
        : rand() < 0.8
          ? splitHundred(n, rand)
          : Array.from({ length: n }, () => Math.floor(rand() * 100));
    r.route = weights.map((w) => ({ destination: destination(rand), ...(w !== undefined ? { weight: w } : {}) }));
    if (rand() < 0.3) r.retries = { attempts: Math.floor(rand() * 4), perTryTimeout: '1s', retryOn: '5xx,503' };
    if (rand() < 0.3) r.fault = { abort: { httpStatus: 503, percentage: { value: 10 } } };
    if (rand() < 0.2) r.mirror = destination(rand);
    if (rand() < 0.2) r.timeout = '3s';
  } else if (kind < 0.9) {
    r.redirect = { uri: '/moved' };
  } else {
    r.directResponse = { status: 418, body: { string: 'teapot' } };
  }
  return r;
}

function splitHundred(n: number, rand: Rand): number[] {
  const out: number[] = [];
  let left = 100;
  for (let i = 0; i < n - 1; i++) {
    const w = Math.floor(rand() * (left + 1));
    out.push(w);
    left -= w;
  }
  out.push(left);
  return out;
}

function virtualService(i: number, rand: Rand): Record<string, unknown> {
  return {
    apiVersion: pick(rand, ['networking.istio.io/v1', 'networking.istio.io/v1beta1', 'networking.istio.io/v1alpha3']),
    kind: 'VirtualService',
    metadata: { name: `vs-${i}`, namespace: pick(rand, ['default', 'default', 'istio-system', 'other']) },
    spec: {
      hosts: [pick(rand, HOSTS), ...(rand() < 0.2 ? [pick(rand, HOSTS)] : [])],
      ...(rand() < 0.15 ? { gateways: [pick(rand, ['mesh', 'bookinfo-gateway'])] } : {}),
      http: Array.from({ length: 1 + Math.floor(rand() * 3) }, () => httpRoute(rand)),
      ...(rand() < 0.15 ? { tcp: [{ route: [{ destination: destination(rand) }] }] } : {}),
    },
  };
}

function destinationRule(i: number, rand: Rand): Record<string, unknown> {
  const lb = pick(rand, [
    { simple: 'ROUND_ROBIN' },
    { simple: 'LEAST_REQUEST' },
    { consistentHash: { httpHeaderName: 'x-user' } },
    { consistentHash: { useSourceIp: true } },
    undefined,
  ]);
  const tls = pick(rand, [
    { mode: 'ISTIO_MUTUAL' },
    { mode: 'DISABLE' },
    { mode: 'SIMPLE', sni: 'x.example.com' },
    undefined,
  ]);
  const policy: Record<string, unknown> = {};
  if (lb) policy.loadBalancer = lb;
  if (tls) policy.tls = tls;
  if (rand() < 0.4) policy.connectionPool = { tcp: { maxConnections: 10 }, http: { http1MaxPendingRequests: 5 } };
  if (rand() < 0.4) policy.outlierDetection = { consecutive5xxErrors: 3, interval: '5s', baseEjectionTime: '30s' };
  if (rand() < 0.3)
    policy.portLevelSettings = [{ port: { number: pick(rand, [9080, 1234]) }, loadBalancer: { simple: 'RANDOM' } }];
  return {
    apiVersion: 'networking.istio.io/v1',
    kind: 'DestinationRule',
    metadata: { name: `dr-${i}`, namespace: pick(rand, ['default', 'istio-system']) },
    spec: {
      host: pick(rand, HOSTS),
      trafficPolicy: policy,
      subsets: pick(rand, SUBSETS)
        ? [
            { name: 'v1', labels: { version: 'v1' } },
            {
              name: pick(rand, ['v2', 'v3', 'v1']),
              labels: { version: pick(rand, ['v2', 'v3', 'v7']) },
              ...(rand() < 0.3 ? { trafficPolicy: { loadBalancer: { simple: 'RANDOM' } } } : {}),
            },
          ]
        : [],
    },
  };
}

test('fuzz: random Istio objects over bookinfo compile to a consistent snapshot, never throw', (t) => {
  const rand = mulberry32(7331);
  const state: InputText = { file: BOOKINFO_STATE, text: readFileSync(BOOKINFO_STATE, 'utf8') };
  // A fixed number of seeded cases: the same inputs on every machine, however fast (no time budget).
  const CASES = 150;
  let cases = 0;
  let withErrors = 0;
  while (cases < CASES) {
    cases++;
    const docs = [
      ...Array.from({ length: 1 + Math.floor(rand() * 4) }, (_, i) => virtualService(i, rand)),
      ...Array.from({ length: Math.floor(rand() * 3) }, (_, i) => destinationRule(i, rand)),
    ];
    const text = docs.map((d) => stringify(d)).join('---\n');
    let result;
    try {
      result = compileTexts([state, { file: 'fuzz.yaml', text }], { hasher: nodeSha256Hex });
    } catch (err) {
      throw new Error(`case ${cases} threw ${(err as Error).message}\n--- inputs ---\n${text}`);
    }
    assert.match(result.snapshot.digest, /^sha256:/);
    if (result.diagnostics.some((d) => d.severity === 'error')) withErrors++;
  }
  t.diagnostic(`${cases} cases, ${withErrors} with error diagnostics`);
  assert.ok(
    withErrors > 0 && withErrors < cases,
    `${withErrors} of ${cases} cases had errors: the generator must exercise both paths`,
  );
});

/**
 * Endpoint churn with a gateway: its groups do not read endpoints (numeric target ports, no
 * AUTO_PASSTHROUGH), so changes stay incremental and equal a full compile; with an AUTO_PASSTHROUGH
 * server (whose SNI-DNAT clusters copy assignments) every endpoint change compiles in full.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { compile } from '../../src/compile/index.js';
import { applyCompileDelta, IncrementalCompiler } from '../../src/compile/incremental.js';
import { buildInputSet, parseDocuments } from '../../src/inputs/index.js';
import type { InputSet } from '../../src/model/inputs.js';
import { BOOKINFO_STATE, ISTIO_SAMPLES } from '../helpers/paths.js';
import { mulberry32 } from '../inputs/prng.js';
import { assertSameOutput, randomStep } from './incremental-helpers.js';

const NET = join(ISTIO_SAMPLES, 'bookinfo', 'networking');
const EASTWEST = `
apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: eastwest, namespace: istio-system}
spec:
  selector: {istio: ingressgateway}
  servers: [{port: {number: 15443, name: tls, protocol: TLS}, hosts: ['*.default.svc.cluster.local'], tls: {mode: AUTO_PASSTHROUGH}}]
`;

function inputs(extra: string): InputSet {
  const texts: [string, string][] = [
    [BOOKINFO_STATE, readFileSync(BOOKINFO_STATE, 'utf8')],
    ['dr.yaml', readFileSync(join(NET, 'destination-rule-all.yaml'), 'utf8')],
    ['gw.yaml', readFileSync(join(NET, 'bookinfo-gateway.yaml'), 'utf8')],
    ['extra.yaml', extra],
  ];
  return buildInputSet(texts.flatMap(([file, text]) => parseDocuments(text, file).docs));
}

const ENDPOINT_LAYER = new Set(['EndpointSlice', 'Endpoints']);

/** `endpointDeltas`: rounds that changed only the endpoint layer (slices) and went out as deltas (the endpoint path). */
function churn(base: InputSet, steps: number): { deltas: number; fulls: number; endpointDeltas: number } {
  const rand = mulberry32(5);
  const ic = new IncrementalCompiler();
  let output = ic.compileFull(base).output;
  let current = base;
  let deltas = 0;
  let fulls = 0;
  let endpointDeltas = 0;
  for (let n = 0; n < steps; n++) {
    const step = randomStep(current, rand, n);
    const r = ic.update(step.next, step.changed);
    if (r.kind === 'delta') deltas++;
    else fulls++;
    if (r.kind === 'delta' && step.changed.every((c) => ENDPOINT_LAYER.has(c.kind))) endpointDeltas++;
    output = r.kind === 'full' ? r.output : applyCompileDelta(output, r.delta, r.layout);
    current = step.next;
    const want = compile(current);
    assertSameOutput(output, want.output, `step ${n} (${step.label}, ${r.kind})`);
    assert.deepEqual(r.diagnostics, want.diagnostics, `step ${n} (${step.label}) diagnostics`);
  }
  return { deltas, fulls, endpointDeltas };
}

test('with an ingress gateway, endpoint churn stays incremental and equals a full compile', () => {
  const { deltas, fulls } = churn(inputs(''), 30);
  assert.ok(deltas > 20, `only ${deltas} deltas (${fulls} full)`);
});

test('with an AUTO_PASSTHROUGH server, every endpoint change compiles in full (and equals a full compile)', () => {
  // Pods that come or go are config rounds (compiled in full, handed on as deltas): not the endpoint path.
  const { endpointDeltas, fulls } = churn(inputs(EASTWEST), 10);
  assert.equal(endpointDeltas, 0);
  assert.ok(fulls > 0);
});

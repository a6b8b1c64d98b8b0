/**
 * Istio's own Gateway API samples as a user applies them (no GatewayClass in the files: istiod
 * creates its `istio` class itself, so meshsnap assumes it), through the gateway pod's served config.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { compileTexts } from '../../../src/pipeline.js';
import { nodeSha256Hex } from '../../../src/snapshot/store/local.js';
import { BOOKINFO_STATE, ISTIO_SAMPLES } from '../../helpers/paths.js';
import { gatewayPod, outcome, send, statusOf } from './conformance-harness.js';

const file = (path: string) => ({ file: path, text: readFileSync(path, 'utf8') });

test("samples/httpbin/gateway-api: the built-in istio class is assumed; the route reaches httpbin through the Gateway's pods", () => {
  const result = compileTexts(
    [
      file(BOOKINFO_STATE),
      file(join(ISTIO_SAMPLES, 'httpbin', 'httpbin.yaml')),
      file(join(ISTIO_SAMPLES, 'httpbin', 'gateway-api', 'httpbin-gateway.yaml')),
      { file: 'pod.yaml', text: gatewayPod('httpbin-gateway', 'default', 40) },
    ],
    { hasher: nodeSha256Hex },
  );
  assert.equal(
    outcome(send(result, 'httpbin-gateway', { host: 'httpbin.example.com', path: '/get' }, 'default')),
    'httpbin',
  );
  assert.ok(statusOf(result, 'Gateway', 'default', 'httpbin-gateway'));
  // No GatewayClass object: nothing to write its status to.
  assert.equal(statusOf(result, 'GatewayClass', '', 'istio'), undefined);
});

test('a Gateway of a class meshsnap does not handle is named in an info diagnostic', () => {
  const result = compileTexts(
    [
      {
        file: 'gw.yaml',
        text: `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: elsewhere, namespace: default}
spec:
  gatewayClassName: envoy-gateway
  listeners: [{name: http, port: 80, protocol: HTTP}]
`,
      },
    ],
    { hasher: nodeSha256Hex },
  );
  const d = result.diagnostics.find((x) => x.code === 'gateway-class-not-handled');
  assert.equal(d?.name, 'elsewhere');
  assert.equal(d?.severity, 'info');
});

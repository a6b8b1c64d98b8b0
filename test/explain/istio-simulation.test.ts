/**
 * Facts from istiod's own traffic simulation tests (pilot/pkg/networking/core/sidecar_simulation_test.go,
 * over pilot/pkg/simulation/traffic.go), asked of meshsnap's bookinfo productpage sidecar:
 * TestLoop (a direct call to the capture ports is black-holed) and TestPassthroughTraffic (calls to
 * an address no service has, on an HTTP port and on a port without a listener, under ALLOW_ANY and
 * REGISTRY_ONLY; the simulation's calls: HTTP plaintext, HTTP over TLS with and without ALPN, TCP,
 * HTTP/2 over TLS; `Host: foo`, address 1.3.3.7).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { explain, type ExplainRequest, type ProxyResources } from '../../src/explain/index.js';
import { compileTexts } from '../../src/pipeline.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { BOOKINFO_NODES, served } from '../helpers/mesh.js';
import { BOOKINFO_STATE, ISTIO_SAMPLES } from '../helpers/paths.js';

const file = (path: string) => ({ file: path, text: readFileSync(path, 'utf8') });
const meshConfig = (mode: string) => ({
  file: 'mesh.yaml',
  text: `apiVersion: v1\nkind: ConfigMap\nmetadata: { name: istio, namespace: istio-system }\ndata:\n  mesh: |\n    outboundTrafficPolicy:\n      mode: ${mode}\n`,
});

function productpage(mode: 'ALLOW_ANY' | 'REGISTRY_ONLY'): ProxyResources {
  const result = compileTexts(
    [
      file(BOOKINFO_STATE),
      file(join(ISTIO_SAMPLES, 'bookinfo', 'networking', 'destination-rule-all.yaml')),
      meshConfig(mode),
    ],
    { hasher: nodeSha256Hex },
  );
  return served(result, BOOKINFO_NODES.productpage).resources;
}

/** simulation.Call's defaults: address 1.3.3.7, path /, SNI = Host for TLS, ALPN from the protocol. */
function call(c: {
  port: number;
  protocol: 'http' | 'http2' | 'tcp';
  tls: boolean;
  alpn?: string;
  direction?: 'inbound';
}): ExplainRequest {
  const protocol = c.protocol === 'tcp' ? 'tcp' : c.protocol === 'http2' ? (c.tls ? 'h2' : 'h2c') : 'http/1.1';
  const alpn = c.alpn ?? (c.protocol === 'http' ? 'http/1.1' : c.protocol === 'http2' ? 'h2' : undefined);
  return {
    direction: c.direction ?? 'outbound',
    host: 'foo',
    port: c.port,
    destinationIp: '1.3.3.7',
    protocol,
    tls: c.tls,
    ...(c.tls ? { sni: 'foo', ...(alpn ? { alpn: [alpn] } : {}) } : {}),
    method: 'GET',
    path: '/',
    headers: { host: 'foo' },
  };
}

const CALLS = {
  'http-plaintext': { protocol: 'http', tls: false },
  'http-tls': { protocol: 'http', tls: true },
  'http-tls-http/1.1': { protocol: 'http', tls: true, alpn: 'http/1.1' },
  'tcp-plaintext': { protocol: 'tcp', tls: false },
  'http2-tls': { protocol: 'http2', tls: true },
} as const;

test('TestLoop: a direct call to the outbound or inbound capture port is black-holed', () => {
  const r = productpage('ALLOW_ANY');
  const out = explain(r, call({ port: 15001, protocol: 'tcp', tls: false }));
  assert.equal(out.listener?.name, 'virtualOutbound');
  assert.equal(out.filterChain?.name, 'virtualOutbound-blackhole');
  assert.deepEqual(
    out.clusters.map((c) => c.name),
    ['BlackHoleCluster'],
  );
  const inbound = explain(r, call({ port: 15006, protocol: 'tcp', tls: false, direction: 'inbound' }));
  assert.equal(inbound.listener?.name, 'virtualInbound');
  assert.equal(inbound.filterChain?.name, 'virtualInbound-blackhole');
  assert.deepEqual(
    inbound.clusters.map((c) => c.name),
    ['BlackHoleCluster'],
  );
});

for (const mode of ['ALLOW_ANY', 'REGISTRY_ONLY'] as const) {
  const expected = mode === 'ALLOW_ANY' ? 'PassthroughCluster' : 'BlackHoleCluster';
  test(`TestPassthroughTraffic ${mode}: an unknown address on an HTTP port (80) and on a port without a listener (82)`, () => {
    const r = productpage(mode);
    for (const [name, c] of Object.entries(CALLS)) {
      const on80 = explain(r, call({ port: 80, ...c }));
      assert.equal(on80.listener?.name, '0.0.0.0_80', name);
      if (name === 'http-plaintext' && mode === 'REGISTRY_ONLY') {
        // 502 from the blackhole virtual host: no cluster.
        assert.equal(on80.virtualHost?.name, 'block_all', name);
        assert.deepEqual(on80.clusters, [], name);
        assert.equal(on80.status, 502, name);
      } else {
        assert.deepEqual(
          on80.clusters.map((x) => x.name),
          [expected],
          `${mode} ${name} on 80`,
        );
      }
      const on82 = explain(r, call({ port: 82, ...c }));
      assert.equal(on82.listener?.name, 'virtualOutbound', name);
      assert.deepEqual(
        on82.clusters.map((x) => x.name),
        [expected],
        `${mode} ${name} on 82`,
      );
    }
  });
}

/**
 * Facts from istiod's TestPassthroughTraffic (pilot/pkg/networking/core/sidecar_simulation_test.go)
 * with its ServiceEntry `istio.io` (MESH_EXTERNAL, DNS, ports 80–86), "with VIP" and "without VIP",
 * under REGISTRY_ONLY and ALLOW_ANY: calls to an address the entry does not have (1.3.3.7, `Host:
 * foo`) are black-holed or passed through, and only plaintext HTTP on an HTTP port meets the
 * blackhole virtual host. Then the same mesh calling the entry's host: reachable through its
 * cluster with the entry, BlackHoleCluster without it.
 *
 * Port 81 names no protocol: sniffed (src/compile/sniffing.ts). Without a VIP it is sniffed on the
 * wildcard address, so plaintext HTTP on it meets the port's blackhole virtual host, as on an HTTP port.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { explain, type ExplainRequest, type ProxyResources } from '../../src/explain/index.js';
import { compileTexts } from '../../src/pipeline.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { served } from '../helpers/mesh.js';

type Mode = 'ALLOW_ANY' | 'REGISTRY_ONLY';

const CLIENT = `apiVersion: v1
kind: Pod
metadata: { name: client, namespace: default, labels: { app: client } }
spec: { serviceAccountName: client, containers: [{ name: app, image: x }] }
status: { phase: Running, podIP: 10.244.9.9, podIPs: [{ ip: 10.244.9.9 }], conditions: [{ type: Ready, status: "True" }] }`;
const meshConfig = (mode: Mode) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: { name: istio, namespace: istio-system }\ndata:\n  mesh: |\n    outboundTrafficPolicy:\n      mode: ${mode}\n`;
const ENTRY = (vip: boolean) => `apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: { name: se, namespace: default }
spec:
  hosts: [istio.io]
${vip ? '  addresses: [1.2.3.4]\n' : ''}  location: MESH_EXTERNAL
  resolution: DNS
  ports:
  - { name: http, number: 80, protocol: HTTP }
  - { name: auto, number: 81 }
  - { name: tcp, number: 82, protocol: TCP }
  - { name: tls, number: 83, protocol: TLS }
  - { name: https, number: 84, protocol: HTTPS }
  - { name: grpc, number: 85, protocol: GRPC }
  - { name: h2, number: 86, protocol: HTTP2 }`;

function client(mode: Mode, entry: string | undefined): ProxyResources {
  const docs = [CLIENT, meshConfig(mode), ...(entry ? [entry] : [])];
  const result = compileTexts([{ file: 'se.yaml', text: docs.join('\n---\n') }], { hasher: nodeSha256Hex });
  assert.deepEqual(
    result.diagnostics.filter((d) => d.severity === 'error'),
    [],
  );
  return served(result, { id: 'sidecar~10.244.9.9~client.default~default.svc.cluster.local' }).resources;
}

/** simulation.Call: address 1.3.3.7, Host foo, SNI = Host for TLS, ALPN from the protocol unless given. */
const CALLS = {
  'http-plaintext': { protocol: 'http/1.1', tls: false },
  'http-tls': { protocol: 'http/1.1', tls: true, alpn: 'http/1.1' },
  'http-tls-http/1.1': { protocol: 'http/1.1', tls: true, alpn: 'http/1.1' },
  'tcp-plaintext': { protocol: 'tcp', tls: false },
  'http2-tls': { protocol: 'h2', tls: true, alpn: 'h2' },
} as const;
type CallName = keyof typeof CALLS;

function call(name: CallName, port: number, host = 'foo', address = '1.3.3.7'): ExplainRequest {
  const c: { protocol: ExplainRequest['protocol']; tls: boolean; alpn?: string } = CALLS[name];
  return {
    direction: 'outbound',
    host,
    port,
    destinationIp: address,
    protocol: c.protocol,
    tls: c.tls,
    ...(c.tls ? { sni: host, ...(c.alpn ? { alpn: [c.alpn] } : {}) } : {}),
    method: 'GET',
    path: '/',
    headers: { host },
  };
}

const HTTP_PORTS = new Set([80, 85, 86]);
const PORTS = [80, 81, 82, 83, 84, 85, 86];

for (const mode of ['REGISTRY_ONLY', 'ALLOW_ANY'] as const) {
  const expected = mode === 'REGISTRY_ONLY' ? 'BlackHoleCluster' : 'PassthroughCluster';
  for (const vip of [true, false]) {
    test(`TestPassthroughTraffic ${mode} ${vip ? 'with' : 'without'} VIP`, () => {
      const r = client(mode, ENTRY(vip));
      for (const port of PORTS) {
        for (const name of Object.keys(CALLS) as CallName[]) {
          const label = `${mode} ${name} on ${port}`;
          const isHttp = name === 'http-plaintext';
          // Without a VIP a TCP port's listener takes every address (istiod: no expectation).
          if (!vip && (port === 82 || (port === 81 && !isHttp))) continue;
          const out = explain(r, call(name, port));
          const httpChain = HTTP_PORTS.has(port) || (port === 81 && !vip);
          if (mode === 'REGISTRY_ONLY' && isHttp && httpChain) {
            assert.equal(out.virtualHost?.name, 'block_all', label);
            assert.deepEqual(out.clusters, [], label);
            continue;
          }
          assert.deepEqual(
            out.clusters.map((c) => c.name),
            [expected],
            label,
          );
        }
      }
    });
  }
}

test('REGISTRY_ONLY: the entry makes its host reachable; without it the host is black-holed', () => {
  const withEntry = client('REGISTRY_ONLY', ENTRY(false));
  const without = client('REGISTRY_ONLY', undefined);
  // HTTP by host on 80; TLS by SNI on 84 (HTTPS); TCP on 82 to the host's (DNS-resolved) address.
  const http = call('http-plaintext', 80, 'istio.io', '151.101.1.1');
  const tls = call('http-tls', 84, 'istio.io', '151.101.1.1');
  const tcp = call('tcp-plaintext', 82, 'istio.io', '151.101.1.1');
  assert.deepEqual(
    explain(withEntry, http).clusters.map((c) => c.name),
    ['outbound|80||istio.io'],
  );
  assert.deepEqual(
    explain(withEntry, tls).clusters.map((c) => c.name),
    ['outbound|84||istio.io'],
  );
  assert.deepEqual(
    explain(withEntry, tcp).clusters.map((c) => c.name),
    ['outbound|82||istio.io'],
  );
  // No service has port 80, 82 or 84 then: virtualOutbound's REGISTRY_ONLY chain takes every call.
  for (const req of [http, tls, tcp]) {
    assert.equal(explain(without, req).listener?.name, 'virtualOutbound');
    assert.deepEqual(
      explain(without, req).clusters.map((c) => c.name),
      ['BlackHoleCluster'],
    );
  }
});

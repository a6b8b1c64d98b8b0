/**
 * Facts from istiod's ServiceEntry simulation test (pilot/pkg/networking/core/
 * serviceentry_simulation_test.go, TestServiceEntry and TestServiceEntryDuplicatedHostname), as
 * calls walked through the served config of a sidecar with meshsnap's `explain`: which listener a
 * connection lands on and which cluster it is sent to. Auto-allocated addresses (istiod's DNS
 * proxy) are not modelled: the HTTPS entry without an address is matched by SNI on 0.0.0.0_443.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { explain, type ProxyResources } from '../../src/explain/index.js';
import { compileTexts } from '../../src/pipeline.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { served } from '../helpers/mesh.js';

const CLIENT = `apiVersion: v1
kind: Pod
metadata: { name: client, namespace: default, labels: { app: client } }
spec: { serviceAccountName: client, containers: [{ name: app, image: x }] }
status: { phase: Running, podIP: 10.244.9.9, podIPs: [{ ip: 10.244.9.9 }], conditions: [{ type: Ready, status: "True" }] }`;

function sidecar(config: string): ProxyResources {
  const result = compileTexts([{ file: 'se.yaml', text: `${CLIENT}\n---\n${config}` }], { hasher: nodeSha256Hex });
  assert.deepEqual(
    result.diagnostics.filter((d) => d.severity === 'error'),
    [],
  );
  return served(result, { id: 'sidecar~10.244.9.9~client.default~default.svc.cluster.local' }).resources;
}

/** istiod's `se` template: two entries on port 9999, optionally a VirtualService for blah1 over TLS. */
function twoEntries(addresses: [string, string], protocol: 'TCP' | 'TLS', virtualService = false): string {
  const entry = (n: number, address: string) => `apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: { name: se${n}, namespace: default }
spec:
  hosts: [blah${n}.somedomain]
  addresses: ["${address}"]
  ports: [{ number: 9999, name: port-9999, protocol: ${protocol} }]`;
  const vs = `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: { name: vs1, namespace: default }
spec:
  hosts: [blah1.somedomain]
  tls:
  - match: [{ port: 9999, sniHosts: [blah1.somedomain] }]
    route: [{ destination: { host: blah1.somedomain, port: { number: 9999 } } }]`;
  return [entry(1, addresses[0]), entry(2, addresses[1]), ...(virtualService ? [vs] : [])].join('\n---\n');
}

interface Call {
  readonly address: string;
  readonly port: number;
  readonly sni?: string;
  readonly http?: boolean;
  readonly host?: string;
}

function walk(r: ProxyResources, c: Call): { listener: string | undefined; cluster: string | undefined } {
  const tls = c.sni !== undefined;
  const host = c.host ?? c.sni ?? c.address;
  const out = explain(r, {
    direction: 'outbound',
    host,
    port: c.port,
    destinationIp: c.address,
    protocol: c.http ? 'http/1.1' : 'tcp',
    tls,
    ...(tls ? { sni: c.sni } : {}),
    method: 'GET',
    path: '/',
    headers: { host },
  });
  return { listener: out.listener?.name, cluster: out.clusters[0]?.name };
}

test('identical CIDR (ignoring insignificant bits) is dropped', () => {
  const r = sidecar(
    twoEntries(['1234:1f1:123:123:f816:3eff:feb8:2287/32', '1234:1f1:123:123:f816:3eff:febf:57ce/32'], 'TCP'),
  );
  assert.deepEqual(walk(r, { address: '1234:1f1:1:1:1:1:1:1', port: 9999 }), {
    listener: '0.0.0.0_9999',
    cluster: 'outbound|9999||blah1.somedomain',
  });
});

test('overlapping CIDR: the more precise range wins, the wider one takes the rest', () => {
  const r = sidecar(
    twoEntries(['1234:1f1:123:123:f816:3eff:feb8:2287/16', '1234:1f1:123:123:f816:3eff:febf:57ce/32'], 'TCP'),
  );
  assert.deepEqual(walk(r, { address: '1234:1f1:123:123:f816:3eff:febf:57ce', port: 9999 }), {
    listener: '0.0.0.0_9999',
    cluster: 'outbound|9999||blah2.somedomain',
  });
  assert.deepEqual(walk(r, { address: '1234::1', port: 9999 }), {
    listener: '0.0.0.0_9999',
    cluster: 'outbound|9999||blah1.somedomain',
  });
});

test('overlapping CIDR with SNI: the destination range decides first, then SNI (no backtracking)', () => {
  const r = sidecar(
    twoEntries(['1234:1f1:123:123:f816:3eff:feb8:2287/16', '1234:1f1:123:123:f816:3eff:febf:57ce/32'], 'TLS', true),
  );
  const longer = '1234:1f1:123:123:f816:3eff:febf:57ce';
  assert.deepEqual(walk(r, { address: longer, port: 9999, sni: 'blah2.somedomain' }), {
    listener: '0.0.0.0_9999',
    cluster: 'outbound|9999||blah2.somedomain',
  });
  assert.deepEqual(walk(r, { address: '1234::1', port: 9999, sni: 'blah1.somedomain' }), {
    listener: '0.0.0.0_9999',
    cluster: 'outbound|9999||blah1.somedomain',
  });
  // istiod's own expectation (istio/istio#52235): the more precise range's chains do not take blah1.
  assert.deepEqual(walk(r, { address: longer, port: 9999, sni: 'blah1.somedomain' }), {
    listener: '0.0.0.0_9999',
    cluster: 'PassthroughCluster',
  });
  assert.deepEqual(walk(r, { address: '1234::1', port: 9999, sni: 'blah2.somedomain' }), {
    listener: '0.0.0.0_9999',
    cluster: 'PassthroughCluster',
  });
});

test('partial overlap of IP: a unique address gets its own listener, a shared one goes to the first entry', () => {
  const entry = (n: number, addresses: string) => `apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: { name: se${n}, namespace: default }
spec:
  hosts: [blah${n}.somedomain]
  addresses: ${addresses}
  ports: [{ number: 9999, name: port-9999, protocol: TCP }]`;
  const r = sidecar(`${entry(1, '["1.1.1.1"]')}\n---\n${entry(2, '["2.2.2.2", "1.1.1.1"]')}`);
  assert.deepEqual(walk(r, { address: '2.2.2.2', port: 9999 }), {
    listener: '2.2.2.2_9999',
    cluster: 'outbound|9999||blah2.somedomain',
  });
  assert.deepEqual(walk(r, { address: '1.1.1.1', port: 9999 }), {
    listener: '1.1.1.1_9999',
    cluster: 'outbound|9999||blah1.somedomain',
  });
});

test('one host in two entries (HTTP and HTTPS, DNS): HTTP by Host on 0.0.0.0_80, HTTPS by SNI on 0.0.0.0_443', () => {
  const r = sidecar(`apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: { name: istio-http, namespace: default }
spec:
  hosts: [istio.io]
  ports: [{ number: 80, name: http, protocol: HTTP }]
  resolution: DNS
---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: { name: istio-https, namespace: default }
spec:
  hosts: [istio.io]
  ports: [{ number: 443, name: https, protocol: HTTPS }]
  resolution: DNS`);
  assert.deepEqual(walk(r, { address: '240.240.91.120', port: 80, http: true, host: 'istio.io' }), {
    listener: '0.0.0.0_80',
    cluster: 'outbound|80||istio.io',
  });
  assert.deepEqual(walk(r, { address: '104.198.14.52', port: 443, sni: 'istio.io' }), {
    listener: '0.0.0.0_443',
    cluster: 'outbound|443||istio.io',
  });
});

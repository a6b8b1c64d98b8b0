/**
 * MeshConfig `proxyListenPort` and `proxyInboundListenPort`, as istiod turns them into xDS
 * (pilot/pkg/networking/core/listener_builder.go buildVirtualOutboundListener and
 * blackholeFilterChain, listener_inbound.go buildInboundListeners and the inbound blackhole chain):
 * the ports of a sidecar's `virtualOutbound` and `virtualInbound` and of their blackhole chains,
 * from the istio ConfigMap to what a sidecar is served, and `explain` finding them.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { matchListener } from '../../src/explain/listener-match.js';
import { served } from '../helpers/mesh.js';
import { compile, SIDECAR, type Json } from '../helpers/mesh-config-views.js';

function capture(mesh = '') {
  const result = compile(mesh);
  assert.deepEqual(
    result.diagnostics.filter((d) => d.severity !== 'info'),
    [],
  );
  const listeners = served(result, SIDECAR).resources.listeners;
  const of = (name: string) => {
    const l = listeners.get(name) as Json;
    const blackhole = (l.filter_chains as Json[]).find((c) => c.name === `${name}-blackhole`);
    return { port: l.address.socket_address.port_value, blackhole: blackhole?.filter_chain_match?.destination_port };
  };
  return { outbound: of('virtualOutbound'), inbound: of('virtualInbound'), all: [...listeners.values()] as Json[] };
}

test('defaults (unset or set to 15001 / 15006): virtualOutbound on 15001, virtualInbound on 15006', () => {
  const unset = capture();
  assert.deepEqual(
    [unset.outbound, unset.inbound],
    [
      { port: 15001, blackhole: 15001 },
      { port: 15006, blackhole: 15006 },
    ],
  );
  const set = capture('proxyListenPort: 15001\nproxyInboundListenPort: 15006');
  assert.deepEqual(set.all, unset.all);
});

test('other ports move the capture listeners and their blackhole chains; explain still finds them', () => {
  const moved = capture('proxyListenPort: 16001\nproxyInboundListenPort: 16006');
  assert.deepEqual(
    [moved.outbound, moved.inbound],
    [
      { port: 16001, blackhole: 16001 },
      { port: 16006, blackhole: 16006 },
    ],
  );
  const out = matchListener(moved.all, { direction: 'outbound', host: '10.96.40.1', port: 8000 });
  assert.ok(out.listener, out.why.join('; '));
  const inbound = matchListener(moved.all, { direction: 'inbound', host: '10.244.1.5', port: 8000 });
  assert.equal(inbound.listener?.name, 'virtualInbound', inbound.why.join('; '));
});

test('the ports are validated: a port number, and not the same for both', () => {
  for (const [mesh, field] of [
    ['proxyListenPort: 0', 'proxyListenPort'],
    ['proxyInboundListenPort: 70000', 'proxyInboundListenPort'],
    ['proxyListenPort: 15006', 'proxyListenPort'],
    ['proxyInboundListenPort: 15001', 'proxyListenPort'],
    ['proxyListenPort: 16000\nproxyInboundListenPort: 16000', 'proxyListenPort'],
  ] as const) {
    const result = compile(mesh);
    assert.ok(
      result.diagnostics.some((d) => d.severity === 'error' && d.field === `data.mesh.${field}`),
      `${mesh}: ${JSON.stringify(result.diagnostics)}`,
    );
  }
});

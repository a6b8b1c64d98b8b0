/** The gateway benchmark's mesh: one ingress gateway exposing every service through its route config. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { measureGateway } from '../../bench/gateway.js';

test('the gateway bench exposes every service: one virtual host per service in http.8080', () => {
  const r = measureGateway(30);
  assert.equal(r.virtualHosts, 30);
  assert.equal(r.routerClasses, 1);
  assert.ok(r.routeConfigBytes > 30 * 100, `${r.routeConfigBytes} bytes`);
});

/**
 * A Gateway server bound to a unix domain socket (istiod: validateServerBind requires port 0;
 * buildGatewayListeners names the listener `<bind>_<port>` and BuildAddress makes it a pipe). Before,
 * meshsnap refused the bind, and with it the whole Gateway.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileGateway, gatewayYaml, INGRESS_NODE } from '../helpers/gateway-sim.js';
import { served } from '../helpers/mesh.js';

type Json = Record<string, unknown>;

const VS = `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: a, namespace: default}
spec:
  hosts: ['*']
  gateways: [istio-system/uds]
  http: [{route: [{destination: {host: a.default.svc.cluster.local, port: {number: 80}}}]}]
`;

test('an HTTP server on a unix socket: a pipe listener `unix://…_0`, its route config, next to the Gateway’s other servers', () => {
  const result = compileGateway(
    gatewayYaml(
      'uds',
      'istio-system',
      "port: {number: 0, name: http-uds, protocol: HTTP}\nbind: unix:///var/run/gw.sock\nhosts: ['*']",
      "port: {number: 80, name: http, protocol: HTTP}\nhosts: ['*']",
    ) + VS,
  );
  assert.deepEqual(
    result.diagnostics.filter((d) => d.severity === 'error').map((d) => `${d.code} ${d.field}`),
    [],
  );
  const { listeners, routes } = served(result, INGRESS_NODE).resources;
  const uds = listeners.get('unix:///var/run/gw.sock_0') as Json | undefined;
  assert.ok(uds, [...listeners.keys()].join(' '));
  assert.deepEqual(uds.address, { pipe: { path: '/var/run/gw.sock' } });
  const rc = routes.get('http.0.unix:///var/run/gw.sock') as Json | undefined;
  assert.ok(rc, [...routes.keys()].join(' '));
  const vh = (rc.virtual_hosts as Json[])[0] as Json;
  assert.equal(((vh.routes as Json[])[0]?.route as Json).cluster, 'outbound|80||a.default.svc.cluster.local');
  // The Gateway's other server is served as before.
  assert.ok([...listeners.keys()].some((n) => n.startsWith('0.0.0.0_')));
});

test('a unix socket bind needs port 0, and port 0 needs a unix socket bind (istiod validateServerBind / validateServerPort)', () => {
  const result = compileGateway(
    gatewayYaml(
      'bad',
      'istio-system',
      "port: {number: 80, name: http-uds, protocol: HTTP}\nbind: unix:///var/run/gw.sock\nhosts: ['*']",
      "port: {number: 0, name: http-zero, protocol: HTTP}\nhosts: ['*']",
      "port: {number: 0, name: http-rel, protocol: HTTP}\nbind: unix://relative/path\nhosts: ['*']",
    ),
  );
  assert.deepEqual(
    result.diagnostics
      .filter((d) => d.severity === 'error' && d.name === 'bad')
      .map((d) => d.field)
      .sort(),
    ['spec.servers[0].port.number', 'spec.servers[1].port.number', 'spec.servers[2].bind'],
  );
});

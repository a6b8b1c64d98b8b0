/** The listener translators on the real Bookinfo cluster state, through the inputs and model layers. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createContext } from '../../src/compile/index.js';
import { NO_SECURITY } from '../../src/compile/security/workload-security.js';
import { buildInbound, buildOutboundListeners, buildProxylessListeners } from '../../src/compile/listeners.js';
import { Diagnostics } from '../../src/model/diagnostics.js';
import { parseInputTexts } from '../../src/pipeline.js';
import { BOOKINFO_STATE } from '../helpers/paths.js';
import { assertListenerRoundTrip, filterConfig } from './listeners-helpers.js';

// Bookinfo's MySQL database, with the cluster IP Kubernetes would have allocated.
const MYSQL = `
apiVersion: v1
kind: Service
metadata: { name: mysqldb, namespace: default, labels: { app: mysqldb } }
spec:
  clusterIP: 10.96.10.6
  clusterIPs: [10.96.10.6]
  ports: [{ port: 3306, name: tcp }]
  selector: { app: mysqldb }
`;

function bookinfoContext() {
  const inputs = parseInputTexts([
    { file: BOOKINFO_STATE, text: readFileSync(BOOKINFO_STATE, 'utf8') },
    { file: 'mysql.yaml', text: MYSQL },
  ]);
  return createContext(inputs, new Diagnostics());
}

test('bookinfo: outbound listener names, RDS "9080" and the MySQL tcp_proxy', () => {
  const ctx = bookinfoContext();
  const listeners = buildOutboundListeners(ctx);
  assert.ok(listeners.has('virtualOutbound'));
  assert.ok(listeners.has('0.0.0.0_9080'));
  assert.ok(listeners.has('10.96.10.6_3306'));
  for (const l of listeners.values()) assertListenerRoundTrip(l);
  const hcm = filterConfig(
    listeners.get('0.0.0.0_9080')?.filter_chains?.[0],
    'envoy.filters.network.http_connection_manager',
  );
  assert.equal((hcm.rds as { route_config_name: string }).route_config_name, '9080');
  const tcp = filterConfig(listeners.get('10.96.10.6_3306')?.filter_chains?.[0], 'envoy.filters.network.tcp_proxy');
  assert.equal(tcp.cluster, 'outbound|3306||mysqldb.default.svc.cluster.local');
});

test('bookinfo: inbound of the reviews workload and proxyless listeners', () => {
  const ctx = bookinfoContext();
  const reviews = ctx.model.services.filter((s) => s.hostname === 'reviews.default.svc.cluster.local');
  assert.equal(reviews.length, 1);
  const inbound = buildInbound(ctx, { namespace: 'default', services: reviews, security: NO_SECURITY });
  assert.deepEqual([...inbound.clusters.keys()], ['inbound|9080||']);
  const chains = inbound.listeners.get('virtualInbound')?.filter_chains ?? [];
  assert.equal(chains.filter((c) => c.name === '0.0.0.0_9080').length, 2);

  const grpc = buildProxylessListeners(ctx);
  assert.ok(grpc.has('reviews.default.svc.cluster.local:9080'));
  assert.ok(!grpc.has('mysqldb.default.svc.cluster.local:3306'), 'TCP ports get no proxyless listener');
});

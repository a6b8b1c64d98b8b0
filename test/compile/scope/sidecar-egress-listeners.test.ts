/**
 * Sidecar egress listeners with a port, a bind or captureMode NONE: facts from istiod's
 * buildSidecarOutboundListeners (listener.go), TestOutboundListenerConfig_WithSidecar, the
 * SidecarScope cases of sidecar_test.go (`sidecar-with-egress-port-*`) and
 * buildSidecarOutboundHTTPRouteConfig / GetEgressListenerForRDS (httproute.go, sidecar.go), on
 * istiod's `known` / `alt-known` / `not-default` mesh plus a MySQL service `db`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generateMesh } from '../../../bench/synthetic.js';
import { sidecarDocuments } from '../../../bench/sidecars.js';
import { indexedInputs } from '../../../src/compile/incremental.js';
import { explain, type ExplainRequest, type ProxyResources } from '../../../src/explain/index.js';
import { buildInputSet } from '../../../src/inputs/index.js';
import { assertChurnMatchesFull } from '../incremental-helpers.js';
import { compileMesh, proxy, sidecar, view, virtualService } from './scope-mesh.js';

const DB = `apiVersion: v1
kind: Service
metadata: {name: db, namespace: default}
spec: {clusterIP: 2.0.0.3, ports: [{port: 3306, name: mysql}]}`;
const KNOWN = 'known.default.svc.cluster.local';

type Json = Record<string, unknown>;
const listener = (v: ReturnType<typeof view>, name: string): Json => {
  const l = v.resources.listeners.get(name);
  assert.ok(l, `listener ${name}`);
  return l as unknown as Json;
};
const vhosts = (v: ReturnType<typeof view>, rc: string) =>
  Object.keys(v.routes[rc] ?? {}).filter((n) => n !== 'allow_any' && n !== 'block_all');
const rdsOf = (l: Json): string[] =>
  [...JSON.stringify(l).matchAll(/"route_config_name":"([^"]*)"/g)].map((m) => m[1] ?? '');
const unsupported = (result: ReturnType<typeof compileMesh>) =>
  result.diagnostics.filter((d) => d.code === 'unsupported-sidecar-field').map((d) => d.field);

test('an HTTP egress listener bound to 127.0.0.1 gets 127.0.0.1_<port> with its own hosts; the catch-all builds every other listener', () => {
  const result = compileMesh(
    DB,
    sidecar(
      'default',
      `{egress: [{port: {number: 8080, protocol: HTTP, name: http}, bind: 127.0.0.1, hosts: ["./${KNOWN}"]}, {hosts: ["*/*"]}]}`,
    ),
  );
  const v = view(result, proxy('default'));
  assert.deepEqual([...v.listeners].sort(), [
    '0.0.0.0_80',
    '0.0.0.0_8080',
    '127.0.0.1_8080',
    '2.0.0.3_3306',
    'virtualInbound',
    'virtualOutbound',
  ]);
  // A bind that is not the wildcard: one HCM chain taking every connection, no HTTP inspector, no passthrough.
  const bound = listener(v, '127.0.0.1_8080');
  assert.equal(bound.bind_to_port, false);
  assert.equal((bound.filter_chains as Json[]).length, 1);
  assert.equal((bound.filter_chains as Json[])[0]?.filter_chain_match, undefined);
  assert.equal(bound.default_filter_chain, undefined);
  assert.deepEqual(rdsOf(bound), ['8080']);
  // The catch-all's 0.0.0.0_8080 is another listener key, so istiod builds it too, naming the same RDS.
  assert.deepEqual(rdsOf(listener(v, '0.0.0.0_8080')), ['8080']);
  // Route config "8080" belongs to the egress listener on 8080 (GetEgressListenerForRDS): its hosts only.
  assert.deepEqual(vhosts(v, '8080'), [`${KNOWN}:8080`]);
  assert.deepEqual(vhosts(v, '80'), [
    'alt-known.default.svc.cluster.local:80',
    `${KNOWN}:80`,
    'not-default.not-default.svc.cluster.local:80',
  ]);
  assert.equal(v.clusters.length, 7);
  assert.deepEqual(unsupported(result), []);
});

test('captureMode NONE without bind: a real socket on 127.0.0.1 (getWildcardsAndLocalHost), not reached through virtualOutbound', () => {
  const v = view(
    compileMesh(
      sidecar(
        'default',
        '{egress: [{port: {number: 8080, protocol: HTTP, name: http}, captureMode: NONE, hosts: ["./*"]}, {hosts: ["*/*"]}]}',
      ),
    ),
    proxy('default'),
  );
  const bound = listener(v, '127.0.0.1_8080');
  assert.equal(bound.bind_to_port, undefined);
  assert.equal(bound.max_connections_to_accept_per_socket_event, 1);
  assert.deepEqual(vhosts(v, '8080'), ['alt-known.default.svc.cluster.local:8080', `${KNOWN}:8080`]);
  // DEFAULT capture keeps the catch-all's listeners unbound.
  assert.equal(listener(v, '0.0.0.0_80').bind_to_port, false);
});

test('sidecar-with-egress-port-trims-service-non-matching-ports: a port listener imports only services on its port, with that port alone', () => {
  const v = view(
    compileMesh(DB, sidecar('default', '{egress: [{port: {number: 80, protocol: HTTP, name: http}, hosts: ["*/*"]}]}')),
    proxy('default'),
  );
  assert.deepEqual(v.clusters, [
    'outbound|80||alt-known.default.svc.cluster.local',
    `outbound|80||${KNOWN}`,
    'outbound|80||not-default.not-default.svc.cluster.local',
  ]);
  assert.deepEqual([...v.listeners].sort(), ['0.0.0.0_80', 'virtualInbound', 'virtualOutbound']);
  assert.equal(v.routes['8080'], undefined);
  assert.equal(vhosts(v, '80').length, 3);
});

test('sidecar-with-egress-port-merges-service-ports: a host imported by two port listeners has both ports', () => {
  const v = view(
    compileMesh(
      sidecar(
        'default',
        `{egress: [{port: {number: 80, protocol: HTTP, name: a}, hosts: ["./${KNOWN}"]}, {port: {number: 8080, protocol: HTTP, name: b}, hosts: ["./${KNOWN}"]}]}`,
      ),
    ),
    proxy('default'),
  );
  assert.deepEqual(v.clusters, [`outbound|8080||${KNOWN}`, `outbound|80||${KNOWN}`]);
  assert.deepEqual(vhosts(v, '80'), [`${KNOWN}:80`]);
  assert.deepEqual(vhosts(v, '8080'), [`${KNOWN}:8080`]);
});

test('a TCP egress listener listens on each service address, or on its bind; the catch-all still builds the other key', () => {
  const onVip = view(
    compileMesh(
      DB,
      sidecar(
        'default',
        '{egress: [{port: {number: 3306, protocol: MYSQL, name: db}, hosts: ["./db.default.svc.cluster.local"]}]}',
      ),
    ),
    proxy('default'),
  );
  assert.deepEqual([...onVip.listeners].sort(), ['2.0.0.3_3306', 'virtualInbound', 'virtualOutbound']);
  assert.match(
    JSON.stringify(listener(onVip, '2.0.0.3_3306')),
    /"cluster":"outbound\|3306\|\|db\.default\.svc\.cluster\.local"/,
  );
  const bound = view(
    compileMesh(
      DB,
      sidecar(
        'default',
        '{egress: [{port: {number: 3306, protocol: MYSQL, name: db}, bind: 127.0.0.1, hosts: ["./db.default.svc.cluster.local"]}, {hosts: ["./*"]}]}',
      ),
    ),
    proxy('default'),
  );
  assert.deepEqual([...bound.listeners].sort(), [
    '0.0.0.0_80',
    '0.0.0.0_8080',
    '127.0.0.1_3306',
    '2.0.0.3_3306',
    'virtualInbound',
    'virtualOutbound',
  ]);
  assert.match(
    JSON.stringify(listener(bound, '127.0.0.1_3306')),
    /"cluster":"outbound\|3306\|\|db\.default\.svc\.cluster\.local"/,
  );
});

test('a catch-all with captureMode NONE binds every port on 127.0.0.1', () => {
  const v = view(
    compileMesh(DB, sidecar('default', '{egress: [{captureMode: NONE, hosts: ["./*"]}]}')),
    proxy('default'),
  );
  assert.deepEqual([...v.listeners].sort(), [
    '127.0.0.1_3306',
    '127.0.0.1_80',
    '127.0.0.1_8080',
    'virtualInbound',
    'virtualOutbound',
  ]);
  for (const name of ['127.0.0.1_3306', '127.0.0.1_80', '127.0.0.1_8080'])
    assert.equal(listener(v, name).max_connections_to_accept_per_socket_event, 1, name);
  assert.deepEqual(rdsOf(listener(v, '127.0.0.1_80')), ['80']);
});

test("a port listener's VirtualService routes its virtual host, and imports its destination on the listener's port only", () => {
  const v = view(
    compileMesh(
      virtualService('default', 'to-alt', KNOWN, '{host: alt-known.default.svc.cluster.local}'),
      sidecar(
        'default',
        `{egress: [{port: {number: 8080, protocol: HTTP, name: http}, bind: 127.0.0.1, hosts: ["./${KNOWN}"]}]}`,
      ),
    ),
    proxy('default'),
  );
  assert.deepEqual(v.clusters, ['outbound|8080||alt-known.default.svc.cluster.local', `outbound|8080||${KNOWN}`]);
  assert.deepEqual(v.routes['8080'], {
    [`${KNOWN}:8080`]: 'outbound|8080||alt-known.default.svc.cluster.local',
    allow_any: 'PassthroughCluster',
  });
});

test('a Sidecar with a port listener gets a scope of its own; a namespace without Sidecar keeps the shared groups', () => {
  const result = compileMesh(
    sidecar(
      'default',
      `{egress: [{port: {number: 8080, protocol: HTTP, name: http}, bind: 127.0.0.1, hosts: ["./*"]}, {hosts: ["*/*"]}]}`,
    ),
  );
  const classes = result.snapshot.content.classes;
  assert.match(classes.find((c) => c.id === 'sidecar/default/_')?.groups[2] ?? '', /^scope\/default\//);
  assert.deepEqual(classes.find((c) => c.id === 'sidecar/not-default/_')?.groups.slice(0, 3), [
    'outbound',
    'endpoints',
    'outbound-listeners',
  ]);
});

const SOCKET = 'unix:///var/run/app.sock';
const domainsOf = (v: ReturnType<typeof view>, rc: string, vh: string): string[] => {
  const config = v.resources.routes.get(rc) as { virtual_hosts?: { name: string; domains: string[] }[] } | undefined;
  return config?.virtual_hosts?.find((h) => h.name === vh)?.domains ?? [];
};

test('a unix domain socket egress listener: a bound pipe listener `<bind>_0`, route config named after the bind with every HTTP port of its hosts', () => {
  const result = compileMesh(
    sidecar(
      'default',
      `{egress: [{port: {number: 0, protocol: HTTP, name: uds}, bind: "${SOCKET}", hosts: ["./${KNOWN}"]}, {hosts: ["*/*"]}]}`,
    ),
  );
  assert.deepEqual(unsupported(result), []);
  const v = view(result, proxy('default'));
  assert.ok(v.listeners.includes(`${SOCKET}_0`), v.listeners.join());
  const uds = listener(v, `${SOCKET}_0`);
  // util.BuildAddress: a pipe with the path after unix://; bindToPort (no original-dst hand-off to a socket).
  assert.deepEqual(uds.address, { pipe: { path: '/var/run/app.sock' } });
  assert.equal(uds.bind_to_port, undefined);
  assert.equal(uds.max_connections_to_accept_per_socket_event, 1);
  assert.equal(uds.listener_filters, undefined);
  assert.equal((uds.filter_chains as Json[]).length, 1);
  assert.equal((uds.filter_chains as Json[])[0]?.filter_chain_match, undefined);
  assert.equal(uds.default_filter_chain, undefined);
  assert.deepEqual(rdsOf(uds), [SOCKET]);
  assert.match(JSON.stringify(uds), /"stat_prefix":"outbound_unix:\/\/\/var\/run\/app\.sock_0"/);
  // listenerPort 0: every port of the listener's services (needsPortMatch), merged by mergeAllVirtualHosts.
  assert.deepEqual(vhosts(v, SOCKET), [`${KNOWN}:80`, `${KNOWN}:8080`]);
  // Listener port 0 keeps ports in domains; port 80 also keeps the bare hosts (mergeAllVirtualHosts).
  const plain = domainsOf(v, SOCKET, `${KNOWN}:80`);
  assert.deepEqual(plain.slice(0, 4), [KNOWN, `${KNOWN}:80`, 'known', 'known:80']);
  assert.ok(plain.includes('2.0.0.0') && plain.includes('2.0.0.0:80'), plain.join());
  const alt = domainsOf(v, SOCKET, `${KNOWN}:8080`);
  assert.deepEqual(alt.slice(0, 2), [`${KNOWN}:8080`, 'known:8080']);
  assert.ok(alt.every((d) => d.includes(':')) && alt.includes('2.0.0.0:8080'), alt.join());
  assert.ok(Object.keys(v.routes[SOCKET] ?? {}).includes('allow_any'));
  // The catch-all still builds every port of every service.
  assert.deepEqual(vhosts(v, '80'), [
    'alt-known.default.svc.cluster.local:80',
    `${KNOWN}:80`,
    'not-default.not-default.svc.cluster.local:80',
  ]);
});

test('a unix domain socket listener with a TCP protocol is reported and not built (istiod names cluster outbound|0||<host>)', () => {
  const result = compileMesh(
    DB,
    sidecar(
      'default',
      `{egress: [{port: {number: 0, protocol: TCP, name: uds}, bind: "${SOCKET}", hosts: ["./db.default.svc.cluster.local"]}, {hosts: ["*/*"]}]}`,
    ),
  );
  assert.deepEqual(unsupported(result), ['spec.egress[0]']);
  const v = view(result, proxy('default'));
  assert.ok(!v.listeners.includes(`${SOCKET}_0`));
  assert.ok(v.listeners.includes('2.0.0.3_3306'));
});

test('HTTP_PROXY on 127.0.0.1 with captureMode NONE (TestOutboundListenerConfigWithSidecarHTTPProxy): one HCM chain, no listener filters, every HTTP port of its hosts', () => {
  const result = compileMesh(
    sidecar(
      'not-default',
      '{egress: [{port: {number: 15080, protocol: HTTP_PROXY, name: "15080"}, bind: 127.0.0.1, captureMode: NONE, hosts: ["default/*"]}]}',
    ),
  );
  assert.deepEqual(unsupported(result), []);
  const v = view(result, proxy('not-default'));
  assert.deepEqual(
    v.listeners.filter((n) => n !== 'virtualInbound' && n !== 'virtualOutbound'),
    ['127.0.0.1_15080'],
  );
  const l = listener(v, '127.0.0.1_15080');
  assert.equal((l.filter_chains as Json[]).length, 1);
  assert.equal(l.listener_filters, undefined);
  assert.equal(l.bind_to_port, undefined);
  assert.deepEqual(rdsOf(l), ['15080']);
  // BuildSidecarOutboundVirtualHosts: an HTTP_PROXY listener's route config takes listener port 0.
  assert.deepEqual(vhosts(v, '15080'), [
    'alt-known.default.svc.cluster.local:80',
    'alt-known.default.svc.cluster.local:8080',
    `${KNOWN}:80`,
    `${KNOWN}:8080`,
  ]);
  assert.ok(domainsOf(v, '15080', `${KNOWN}:8080`).every((d) => d.endsWith(':8080')));
  assert.deepEqual(domainsOf(v, '15080', `${KNOWN}:80`).slice(0, 2), [KNOWN, `${KNOWN}:80`]);
});

test('HTTP_PROXY without bind: 0.0.0.0_<port> reached through virtualOutbound, without protocol sniffing', () => {
  const v = view(
    compileMesh(
      sidecar(
        'default',
        `{egress: [{port: {number: 3128, protocol: HTTP_PROXY, name: proxy}, hosts: ["./${KNOWN}"]}]}`,
      ),
    ),
    proxy('default'),
  );
  const l = listener(v, '0.0.0.0_3128');
  assert.equal(l.bind_to_port, false);
  assert.equal(l.listener_filters, undefined);
  assert.equal((l.filter_chains as Json[]).length, 1);
  assert.equal((l.filter_chains as Json[])[0]?.filter_chain_match, undefined);
  assert.deepEqual(vhosts(v, '3128'), [`${KNOWN}:80`, `${KNOWN}:8080`]);
  // The listener on 3128 owns the services: no listener on their own ports.
  assert.ok(!v.listeners.includes('0.0.0.0_80'));
});

test('explain: a connection to a service port does not reach the pipe listener, and explaining does not fail on it', () => {
  const r = view(
    compileMesh(
      sidecar(
        'default',
        `{egress: [{port: {number: 0, protocol: HTTP, name: uds}, bind: "${SOCKET}", hosts: ["./*"]}, {hosts: ["*/*"]}]}`,
      ),
    ),
    proxy('default'),
  ).resources as unknown as ProxyResources;
  const out = explain(r, {
    direction: 'outbound',
    host: 'known',
    port: 80,
    destinationIp: '2.0.0.0',
    protocol: 'http/1.1',
    tls: false,
    method: 'GET',
    path: '/',
    headers: { host: 'known' },
  });
  assert.equal(out.listener?.name, '0.0.0.0_80');
  assert.equal(out.clusters[0]?.name, `outbound|80||${KNOWN}`);
});

test('explain: a call to 127.0.0.1:8080 reaches the captureMode NONE listener; loopback is never captured', () => {
  const r = view(
    compileMesh(
      sidecar(
        'default',
        '{egress: [{port: {number: 8080, protocol: HTTP, name: http}, bind: 127.0.0.1, captureMode: NONE, hosts: ["./*"]}, {hosts: ["*/*"]}]}',
      ),
    ),
    proxy('default'),
  ).resources as unknown as ProxyResources;
  const call = (port: number, host: string): ExplainRequest => ({
    direction: 'outbound',
    host,
    port,
    destinationIp: '127.0.0.1',
    protocol: 'http/1.1',
    tls: false,
    method: 'GET',
    path: '/',
    headers: { host },
  });
  const hit = explain(r, call(8080, `known:8080`));
  assert.equal(hit.listener?.name, '127.0.0.1_8080');
  assert.match(hit.listener?.why.join(' ') ?? '', /loopback/);
  assert.equal(hit.routeConfig?.name, '8080');
  assert.equal(hit.clusters[0]?.name, `outbound|8080||${KNOWN}`);
  const miss = explain(r, call(80, 'known'));
  assert.equal(miss.listener, undefined);
  assert.equal(miss.outcome, 'no_listener');
});

test('endpoint churn under Sidecars with port listeners: every change a delta, each result equals a full compile', () => {
  const mesh = generateMesh({ services: 150, seed: 7 }).docs;
  const sidecars = sidecarDocuments(mesh).map((d) => ({
    ...d,
    object: {
      ...(d.object as object),
      spec: {
        egress: [
          {
            port: { number: 9090, protocol: 'HTTP', name: 'admin' },
            bind: '127.0.0.1',
            captureMode: 'NONE',
            hosts: ['./*'],
          },
          { port: { number: 5432, protocol: 'TCP', name: 'db' }, hosts: ['./*'] },
          { hosts: ['./*', 'istio-system/*'] },
        ],
      },
    },
  }));
  assertChurnMatchesFull(indexedInputs(buildInputSet([...mesh, ...sidecars])), 3, 25, (output) =>
    assert.ok([...output.groups.values()].some((g) => g.listeners.has('127.0.0.1_9090'))),
  );
});

/**
 * `explain` on hand-made resources of other shapes than a sidecar's: a gateway (no capture
 * listeners, a listener bound to the port, SNI filter chains, TLS termination, `require_tls`),
 * and the protocol errors Istio's simulation names (plaintext into a TLS-terminating chain, TLS or
 * raw TCP into an HTTP connection manager).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { explain, type ExplainRequest, type JsonObject, type ProxyResources } from '../../src/explain/index.js';
import { explainRequest } from '../helpers/explain-request.js';

const HCM = 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
const TCP = 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy';
const hcm = (routeConfigName: string, extra: JsonObject = {}) => ({
  name: 'envoy.filters.network.http_connection_manager',
  typed_config: {
    '@type': HCM,
    rds: { route_config_name: routeConfigName },
    http_filters: [
      {
        name: 'envoy.filters.http.rbac',
        typed_config: {
          '@type': 'type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC',
          rules: { action: 'DENY', policies: { 'ns[istio-system]-policy[deny-admin]-rule[0]': {} } },
        },
      },
      {
        name: 'envoy.filters.http.router',
        typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' },
      },
    ],
    ...extra,
  },
});
const TLS_SOCKET = {
  name: 'envoy.transport_sockets.tls',
  typed_config: { '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext' },
};

/** A gateway: port 8080 plaintext HTTP, port 8443 with one TLS-terminating chain per SNI and a passthrough one. */
const gateway: ProxyResources = {
  listeners: new Map<string, JsonObject>([
    [
      '0.0.0.0_8080',
      {
        name: '0.0.0.0_8080',
        address: { socket_address: { address: '0.0.0.0', port_value: 8080 } },
        filter_chains: [{ filters: [hcm('http.8080')] }],
      },
    ],
    [
      '0.0.0.0_8443',
      {
        name: '0.0.0.0_8443',
        address: { socket_address: { address: '0.0.0.0', port_value: 8443 } },
        listener_filters: [
          {
            name: 'envoy.filters.listener.tls_inspector',
            typed_config: {
              '@type': 'type.googleapis.com/envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector',
            },
          },
        ],
        filter_chains: [
          {
            name: 'bookinfo',
            filter_chain_match: { server_names: ['bookinfo.example.com'] },
            transport_socket: TLS_SOCKET,
            filters: [hcm('https.8443.bookinfo')],
          },
          {
            name: 'passthrough',
            filter_chain_match: { server_names: ['*.internal.example.com'] },
            filters: [
              {
                name: 'envoy.filters.network.tcp_proxy',
                typed_config: { '@type': TCP, cluster: 'outbound|443||db.internal.example.com' },
              },
            ],
          },
        ],
      },
    ],
  ]),
  routes: new Map<string, JsonObject>([
    [
      'http.8080',
      {
        name: 'http.8080',
        ignore_port_in_host_matching: true,
        virtual_hosts: [
          {
            name: 'bookinfo.example.com:8080',
            domains: ['bookinfo.example.com', 'bookinfo.example.com:*'],
            require_tls: 'ALL',
            routes: [
              { match: { prefix: '/' }, route: { cluster: 'outbound|9080||productpage.default.svc.cluster.local' } },
            ],
          },
          {
            name: 'wild.example.com:8080',
            domains: ['*.example.com'],
            routes: [
              {
                name: 'api',
                match: { prefix: '/api', headers: [{ name: ':method', string_match: { exact: 'GET' } }] },
                route: {
                  weighted_clusters: {
                    clusters: [
                      { name: 'outbound|80|v1|api.default.svc.cluster.local', weight: 3 },
                      { name: 'outbound|80|v2|api.default.svc.cluster.local', weight: 1 },
                    ],
                  },
                },
                metadata: {
                  filter_metadata: {
                    istio: { config: '/apis/networking.istio.io/v1/namespaces/default/virtual-service/api' },
                  },
                },
              },
            ],
          },
        ],
      },
    ],
    [
      'https.8443.bookinfo',
      {
        name: 'https.8443.bookinfo',
        virtual_hosts: [
          { name: 'bookinfo', domains: ['*'], routes: [{ match: { prefix: '/' }, direct_response: { status: 418 } }] },
        ],
      },
    ],
  ]),
  clusters: new Map(),
  endpoints: new Map(),
};

const req = (over: Partial<ExplainRequest>): ExplainRequest =>
  explainRequest({ host: 'bookinfo.example.com', port: 8080, destinationIp: '10.0.0.9', ...over });

test('a gateway: the listener bound to the port, the suffix wildcard virtual host, weighted clusters, RBAC listed', () => {
  const e = explain(gateway, req({ host: 'api.example.com', path: '/api/books' }));
  assert.equal(e.listener?.name, '0.0.0.0_8080');
  assert.match(e.listener?.why[0] ?? '', /no capture listener on 15001/);
  assert.equal(e.virtualHost?.name, 'wild.example.com:8080');
  // Host "api.example.com:8080", its port ignored (ignore_port_in_host_matching).
  assert.equal(e.virtualHost?.matchedDomain, '*.example.com');
  assert.equal(e.virtualHost?.authority, 'api.example.com');
  assert.deepEqual(
    e.clusters.map((c) => [c.name, c.weight, c.found]),
    [
      ['outbound|80|v1|api.default.svc.cluster.local', 75, false],
      ['outbound|80|v2|api.default.svc.cluster.local', 25, false],
    ],
  );
  assert.match(e.notes.join('\n'), /cluster outbound\|80\|v1\|api\.default\.svc\.cluster\.local is not served/);
  assert.equal(e.httpFilters?.[0]?.name, 'envoy.filters.http.rbac');
  assert.match(
    e.httpFilters?.[0]?.detail ?? '',
    /enforced DENY: ns\[istio-system\]-policy\[deny-admin\]-rule\[0\] \(not evaluated by explain\)/,
  );
  assert.deepEqual(
    e.provenance.map((p) => `${p.kind} ${p.namespace}/${p.name}`),
    ['VirtualService default/api'],
  );
  const post = explain(gateway, req({ host: 'api.example.com', path: '/api/books', method: 'POST' }));
  assert.equal(post.outcome, 'not_found');
  assert.match(post.skippedRoutes?.[0]?.reason ?? '', /header :method exact "GET" \(request: "POST"\) does not hold/);
  const none = explain(gateway, req({ host: 'example.org' }));
  assert.equal(none.outcome, 'not_found');
  assert.match(none.summary, /no virtual host of route config http\.8080 matches "example\.org"/);
  // require_tls ALL: a plaintext request is redirected to https.
  const plain = explain(gateway, req({}));
  assert.equal(plain.outcome, 'redirect');
  assert.equal(plain.status, 301);
});

test('a gateway on 8443: SNI picks the TLS-terminating chain or the TLS passthrough one', () => {
  const tls = explain(gateway, req({ port: 8443, tls: true, protocol: 'h2', alpn: ['h2', 'http/1.1'] }));
  assert.equal(tls.filterChain?.name, 'bookinfo');
  assert.equal(tls.outcome, 'direct_response');
  assert.equal(tls.status, 418);
  const through = explain(gateway, req({ port: 8443, tls: true, sni: 'db.internal.example.com', protocol: 'tcp' }));
  assert.equal(through.filterChain?.name, 'passthrough');
  assert.equal(through.outcome, 'tcp_proxy');
  assert.deepEqual(
    through.clusters.map((c) => c.name),
    ['outbound|443||db.internal.example.com'],
  );
  const unknown = explain(gateway, req({ port: 8443, tls: true, sni: 'other.org' }));
  assert.equal(unknown.outcome, 'no_filter_chain');
});

test('protocol errors, as Istio’s simulation names them', () => {
  // Plaintext into the TLS-terminating chain (no SNI without TLS: the chain is found by… nothing): none matches.
  const plainTo8443 = explain(gateway, req({ port: 8443 }));
  assert.equal(plainTo8443.outcome, 'no_filter_chain');
  const oneChain: ProxyResources = {
    ...gateway,
    listeners: new Map([
      [
        'l',
        {
          name: 'l',
          address: { socket_address: { address: '0.0.0.0', port_value: 9443 } },
          filter_chains: [{ name: 'tls', transport_socket: TLS_SOCKET, filters: [hcm('http.8080')] }],
        },
      ],
    ]),
  };
  const plain = explain(oneChain, req({ port: 9443 }));
  assert.equal(plain.outcome, 'protocol_error');
  assert.match(plain.summary, /filter chain tls terminates TLS: a plaintext client fails the handshake/);
  const tlsToHcm = explain(gateway, req({ tls: true }));
  assert.equal(tlsToHcm.outcome, 'protocol_error');
  assert.match(tlsToHcm.summary, /TLS reaches the HTTP connection manager of filter chain #0/);
  const tcpToHcm = explain(gateway, req({ protocol: 'tcp' }));
  assert.equal(tcpToHcm.outcome, 'protocol_error');
});

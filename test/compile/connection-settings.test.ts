/**
 * MeshConfig `defaultConfig.connectionSettings` (ProxyConfig ConnectionSettings), as istiod turns it
 * into xDS (pilot/pkg/networking/core/connection_settings.go resolveConnectionSettings,
 * applyEdgeProfileDefaults and applyConnectionSettingsToHCM, called by buildHTTPConnectionManager
 * for every sidecar and gateway HCM; gateway.go buildGatewayListeners for the listener buffer
 * limit), from the istio ConfigMap to what a sidecar and a gateway are served. Facts of istiod's
 * connection_settings_test.go are checked on the served resources.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compile, SIDECAR, views, type Json } from '../helpers/mesh-config-views.js';
import { served } from '../helpers/mesh.js';

function compiled(mesh = '') {
  const result = compile(mesh);
  assert.deepEqual(
    result.diagnostics.filter((d) => d.severity !== 'info'),
    [],
  );
  const v = views(result);
  assert.ok(v.inbound.length > 0 && v.outbound.length > 0 && v.gateway.length === 1);
  const sidecarListeners = [...served(result, SIDECAR).resources.listeners.values()] as Json[];
  return { ...v, sidecars: [...v.inbound, ...v.outbound], sidecarListeners };
}

/** The fields applyConnectionSettingsToHCM sets, as served. */
const settings = (h: Json) => ({
  common: h.common_http_protocol_options,
  streamIdle: h.stream_idle_timeout,
  request: h.request_timeout,
  requestHeaders: h.request_headers_timeout,
  drain: h.drain_timeout,
  http2: h.http2_protocol_options,
  mergeSlashes: h.merge_slashes,
  escapedSlashes: h.path_with_escaped_slashes_action,
});

const ISTIOD_DEFAULTS = {
  common: undefined,
  streamIdle: '0s',
  request: undefined,
  requestHeaders: undefined,
  drain: undefined,
  http2: undefined,
  mergeSlashes: undefined,
  escapedSlashes: 'KEEP_UNCHANGED',
};

test('without connectionSettings (or with an empty one, or SIDECAR): istiod’s HCM defaults, no listener buffer limit', () => {
  for (const mesh of [
    '',
    'defaultConfig: {connectionSettings: {}}',
    'defaultConfig: {connectionSettings: {profile: SIDECAR}}',
  ]) {
    const v = compiled(mesh);
    for (const h of [...v.sidecars, ...v.gateway]) assert.deepEqual(settings(h), ISTIOD_DEFAULTS, mesh);
    assert.equal(v.gatewayListener.per_connection_buffer_limit_bytes, undefined);
  }
});

test('explicit settings reach every sidecar and gateway HCM; the buffer limit only gateway listeners', () => {
  const v = compiled(`
defaultConfig:
  connectionSettings:
    listenerPerConnectionBufferLimitBytes: 16384
    httpIdleTimeout: 1h
    httpMaxConnectionDuration: 30m
    httpMaxStreamDuration: 90s
    httpStreamIdleTimeout: 300s
    httpRequestTimeout: 2m
    httpRequestHeadersTimeout: 10s
    httpDrainTimeout: 5s
    httpMaxConcurrentStreams: 100
    http2InitialStreamWindowSize: 65536
    http2InitialConnectionWindowSize: 1048576
    httpHeadersWithUnderscoresAction: HEADERS_WITH_UNDERSCORES_REJECT_REQUEST
    httpMergeSlashes: true
    httpPathWithEscapedSlashesAction: UNESCAPE_AND_REDIRECT`);
  const expected = {
    common: {
      idle_timeout: '3600s',
      max_connection_duration: '1800s',
      max_stream_duration: '90s',
      headers_with_underscores_action: 'REJECT_REQUEST',
    },
    streamIdle: '300s',
    request: '120s',
    requestHeaders: '10s',
    drain: '5s',
    http2: { max_concurrent_streams: 100, initial_stream_window_size: 65536, initial_connection_window_size: 1048576 },
    mergeSlashes: true,
    escapedSlashes: 'UNESCAPE_AND_REDIRECT',
  };
  for (const h of [...v.sidecars, ...v.gateway]) assert.deepEqual(settings(h), expected);
  assert.equal(v.gatewayListener.per_connection_buffer_limit_bytes, 16384);
  for (const l of v.sidecarListeners) assert.equal(l.per_connection_buffer_limit_bytes, undefined, l.name);
});

test('profile EDGE: Envoy’s edge defaults on gateways only, explicit values kept (ALLOW, KEEP_UNCHANGED too)', () => {
  const edge = compiled('defaultConfig: {connectionSettings: {profile: EDGE}}');
  const [gw] = edge.gateway as [Json];
  assert.deepEqual(settings(gw), {
    common: { idle_timeout: '3600s', headers_with_underscores_action: 'REJECT_REQUEST' },
    streamIdle: '300s',
    request: '300s',
    requestHeaders: '60s',
    drain: undefined,
    http2: { max_concurrent_streams: 100, initial_stream_window_size: 65536, initial_connection_window_size: 1048576 },
    mergeSlashes: true,
    escapedSlashes: 'UNESCAPE_AND_REDIRECT',
  });
  assert.equal(edge.gatewayListener.per_connection_buffer_limit_bytes, 32768);
  // "EDGE profile on sidecar does not apply defaults".
  for (const h of edge.sidecars) assert.deepEqual(settings(h), ISTIOD_DEFAULTS);

  const overridden = compiled(`
defaultConfig:
  connectionSettings:
    profile: EDGE
    listenerPerConnectionBufferLimitBytes: 16384
    httpMaxConcurrentStreams: 50
    httpHeadersWithUnderscoresAction: HEADERS_WITH_UNDERSCORES_DROP_HEADER
    httpPathWithEscapedSlashesAction: UNESCAPE_AND_FORWARD`);
  const [o] = overridden.gateway as [Json];
  assert.equal(overridden.gatewayListener.per_connection_buffer_limit_bytes, 16384);
  assert.equal(o.http2_protocol_options.max_concurrent_streams, 50);
  assert.equal(o.common_http_protocol_options.headers_with_underscores_action, 'DROP_HEADER');
  assert.equal(o.path_with_escaped_slashes_action, 'UNESCAPE_AND_FORWARD');
  assert.equal(o.merge_slashes, true, 'defaults still applied for unset fields');

  const kept = compiled(`
defaultConfig:
  connectionSettings:
    profile: EDGE
    httpHeadersWithUnderscoresAction: HEADERS_WITH_UNDERSCORES_ALLOW
    httpPathWithEscapedSlashesAction: KEEP_UNCHANGED`);
  const [k] = kept.gateway as [Json];
  // ALLOW is Envoy's zero value: the options are there without the field.
  assert.deepEqual(k.common_http_protocol_options, { idle_timeout: '3600s' });
  assert.equal(k.path_with_escaped_slashes_action, 'KEEP_UNCHANGED');
});

test('connectionSettings path handling takes precedence over pathNormalization where set', () => {
  const v = compiled(`
pathNormalization: {normalization: DECODE_AND_MERGE_SLASHES}
defaultConfig:
  connectionSettings: {httpMergeSlashes: false, httpPathWithEscapedSlashesAction: REJECT_REQUEST}`);
  for (const h of [...v.sidecars, ...v.gateway]) {
    assert.equal(h.normalize_path, true);
    assert.equal(h.merge_slashes, undefined);
    assert.equal(h.path_with_escaped_slashes_action, 'REJECT_REQUEST');
  }
  // Unset, the mesh's normalization stands.
  const merged = compiled(`
pathNormalization: {normalization: DECODE_AND_MERGE_SLASHES}
defaultConfig: {connectionSettings: {httpDrainTimeout: 1s}}`);
  for (const h of [...merged.sidecars, ...merged.gateway]) {
    assert.equal(h.merge_slashes, true);
    assert.equal(h.path_with_escaped_slashes_action, 'UNESCAPE_AND_FORWARD');
  }
});

test('connectionSettings is validated as istiod’s validateConnectionSettings; its non-xDS fields are reported', () => {
  const bad = compile(`
defaultConfig:
  connectionSettings:
    profile: CORE
    listenerPerConnectionBufferLimitBytes: -1
    clusterPerConnectionBufferLimitBytes: -1
    httpIdleTimeout: -1s
    httpMaxConcurrentStreams: 0
    http2InitialStreamWindowSize: 1000
    http2InitialConnectionWindowSize: 2147483648
    httpHeadersWithUnderscoresAction: REJECT_REQUEST
    httpPathWithEscapedSlashesAction: DROP
    listenerConnectionLimit: 0
    globalDownstreamConnectionLimit: 0
    httpRequestTimeout: 99999999999999h
    unknownSetting: 1`);
  const errors = new Set(bad.diagnostics.filter((d) => d.severity === 'error').map((d) => d.field));
  for (const f of [
    'profile',
    'listenerPerConnectionBufferLimitBytes',
    'clusterPerConnectionBufferLimitBytes',
    'httpIdleTimeout',
    'httpMaxConcurrentStreams',
    'http2InitialStreamWindowSize',
    'http2InitialConnectionWindowSize',
    'httpHeadersWithUnderscoresAction',
    'httpPathWithEscapedSlashesAction',
    'listenerConnectionLimit',
    'globalDownstreamConnectionLimit',
    'httpRequestTimeout',
  ])
    assert.ok(errors.has(`data.mesh.defaultConfig.connectionSettings.${f}`), `${f}: ${[...errors].join()}`);
  assert.ok(
    bad.diagnostics.some(
      (d) => d.code === 'unknown-field' && d.field === 'data.mesh.defaultConfig.connectionSettings.unknownSetting',
    ),
  );

  const other = compile(`
defaultConfig:
  connectionSettings: {clusterPerConnectionBufferLimitBytes: 1024, listenerConnectionLimit: 10, globalDownstreamConnectionLimit: 100}`);
  const by = (k: string) =>
    other.diagnostics.find((d) => d.field === `data.mesh.defaultConfig.connectionSettings.${k}`);
  for (const k of [
    'clusterPerConnectionBufferLimitBytes',
    'listenerConnectionLimit',
    'globalDownstreamConnectionLimit',
  ])
    assert.equal(by(k)?.severity, 'info', k);
  assert.equal(
    other.diagnostics.find((d) => d.field === 'data.mesh.defaultConfig.connectionSettings'),
    undefined,
    'no longer reported as an agent-only field',
  );
});

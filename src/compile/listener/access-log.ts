/**
 * MeshConfig `accessLogFile` / `accessLogEncoding` / `accessLogFormat`: istiod's file access log
 * (accesslog.go with model.FileAccessLogFromMeshConfig), laid over built listeners.
 *
 * istiod appends the logger to every HttpConnectionManager (setHTTPAccessLog) and every tcp_proxy
 * (setTCPAccessLog) of sidecars and gateways, except the tcp_proxy of the `virtualOutbound-blackhole`
 * and `virtualInbound-blackhole` chains, which it builds without one; and it puts the logger, with a
 * filter on the `NR` response flag (no filter chain matched), on the listener itself for
 * virtualOutbound, virtualInbound and gateway listeners (setListenerAccessLog). Proxyless gRPC
 * resources have none (grpcgen). The builders stay unaware of it: a mesh without `accessLogFile`
 * never comes here, so its resources are the same objects and bytes as before.
 */
import type { EnvoyFileAccessLogProvider } from '../../model/extension-provider.js';
import type { MeshAccessLog } from '../../model/mesh-config.js';
import {
  decodeMessage,
  packAny,
  toStruct,
  type Any,
  type envoy,
  type FilterChain,
  type Listener,
} from '../../xds/proto.js';
import { TypeName } from '../../xds/type-urls.js';
import { VIRTUAL_INBOUND, VIRTUAL_OUTBOUND } from '../names.js';
import { FilterName, type NetworkFilter } from './filters.js';

export type AccessLog = envoy.config.accesslog.v3.AccessLog.$Properties;

const FILE_ACCESS_LOG = 'envoy.extensions.access_loggers.file.v3.FileAccessLog';
const REQ_WITHOUT_QUERY = 'envoy.extensions.formatter.req_without_query.v3.ReqWithoutQuery';

/** istiod's EnvoyTextLogFormat (Istio 1.9 onwards). */
export const ISTIO_TEXT_LOG_FORMAT =
  '[%START_TIME%] "%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% %PROTOCOL%" %RESPONSE_CODE% %RESPONSE_FLAGS% ' +
  '%RESPONSE_CODE_DETAILS% %CONNECTION_TERMINATION_DETAILS% "%UPSTREAM_TRANSPORT_FAILURE_REASON%" ' +
  '%BYTES_RECEIVED% %BYTES_SENT% %DURATION% %RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)% "%REQ(X-FORWARDED-FOR)%" ' +
  '"%REQ(USER-AGENT)%" "%REQ(X-REQUEST-ID)%" "%REQ(:AUTHORITY)%" "%UPSTREAM_HOST%" %UPSTREAM_CLUSTER_RAW% ' +
  '%UPSTREAM_LOCAL_ADDRESS% %DOWNSTREAM_LOCAL_ADDRESS% %DOWNSTREAM_REMOTE_ADDRESS% %REQUESTED_SERVER_NAME% ' +
  '%ROUTE_NAME%\n';

/** istiod's EnvoyJSONLogFormatIstio. */
export const ISTIO_JSON_LOG_FORMAT: Readonly<Record<string, string>> = Object.freeze({
  start_time: '%START_TIME%',
  route_name: '%ROUTE_NAME%',
  method: '%REQ(:METHOD)%',
  path: '%REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%',
  protocol: '%PROTOCOL%',
  response_code: '%RESPONSE_CODE%',
  response_flags: '%RESPONSE_FLAGS%',
  response_code_details: '%RESPONSE_CODE_DETAILS%',
  connection_termination_details: '%CONNECTION_TERMINATION_DETAILS%',
  bytes_received: '%BYTES_RECEIVED%',
  bytes_sent: '%BYTES_SENT%',
  duration: '%DURATION%',
  upstream_service_time: '%RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)%',
  x_forwarded_for: '%REQ(X-FORWARDED-FOR)%',
  user_agent: '%REQ(USER-AGENT)%',
  request_id: '%REQ(X-REQUEST-ID)%',
  authority: '%REQ(:AUTHORITY)%',
  upstream_host: '%UPSTREAM_HOST%',
  upstream_cluster: '%UPSTREAM_CLUSTER_RAW%',
  upstream_local_address: '%UPSTREAM_LOCAL_ADDRESS%',
  downstream_local_address: '%DOWNSTREAM_LOCAL_ADDRESS%',
  downstream_remote_address: '%DOWNSTREAM_REMOTE_ADDRESS%',
  requested_server_name: '%REQUESTED_SERVER_NAME%',
  upstream_transport_failure_reason: '%UPSTREAM_TRANSPORT_FAILURE_REASON%',
});

/** The `%REQ_WITHOUT_QUERY(...)%` operator needs its formatter extension (an empty message). */
const REQ_WITHOUT_QUERY_FORMATTER = Object.freeze({
  name: 'envoy.formatter.req_without_query',
  typed_config: packAny(REQ_WITHOUT_QUERY, {}),
});
const needsReqWithoutQuery = (s: string): boolean => s.includes('%REQ_WITHOUT_QUERY');

/** The `envoy.access_loggers.file` logger of the mesh config (istiod's FileAccessLogFromMeshConfig). */
export function fileAccessLog(log: MeshAccessLog): AccessLog {
  let logFormat: envoy.config.core.v3.SubstitutionFormatString.$Properties;
  let formatters = false;
  if (log.encoding === 'JSON') {
    const fields = log.json ?? ISTIO_JSON_LOG_FORMAT;
    // istiod looks at the top-level string values only.
    formatters = Object.values(fields).some((v) => typeof v === 'string' && needsReqWithoutQuery(v));
    logFormat = { json_format: toStruct(fields), json_format_options: {} };
  } else {
    // "Istio will insert a newline ('\n') on all formats (if missing)."
    const text = log.text ? (log.text.endsWith('\n') ? log.text : `${log.text}\n`) : ISTIO_TEXT_LOG_FORMAT;
    formatters = needsReqWithoutQuery(text);
    logFormat = { text_format_source: { inline_string: text } };
  }
  if (formatters) logFormat.formatters = [REQ_WITHOUT_QUERY_FORMATTER];
  return {
    name: 'envoy.access_loggers.file',
    typed_config: packAny(FILE_ACCESS_LOG, { path: log.path, log_format: logFormat }),
  };
}

/**
 * The logger of an `envoyFileAccessLog` extension provider (istiod's fileAccessLogFromTelemetry):
 * its path (default /dev/stdout), its `text` (a newline added) or `labels` (JSON; none: istiod's
 * default fields) format, istiod's text format when it sets none, no format at all when
 * `logFormat` is set with neither, and `omitEmptyValues`.
 */
export function providerFileAccessLog(p: EnvoyFileAccessLogProvider): AccessLog {
  let logFormat: envoy.config.core.v3.SubstitutionFormatString.$Properties | undefined;
  let formatters = false;
  const f = p.logFormat;
  if (f?.labels !== undefined) {
    const fields = Object.keys(f.labels).length ? f.labels : ISTIO_JSON_LOG_FORMAT;
    formatters = Object.values(fields).some((v) => typeof v === 'string' && needsReqWithoutQuery(v));
    logFormat = { json_format: toStruct(fields), json_format_options: {} };
  } else if (!f || f.text !== undefined) {
    const given = f?.text ?? '';
    const text = given ? (given.endsWith('\n') ? given : `${given}\n`) : ISTIO_TEXT_LOG_FORMAT;
    formatters = needsReqWithoutQuery(text);
    logFormat = { text_format_source: { inline_string: text } };
  }
  if (logFormat && p.omitEmptyValues) logFormat.omit_empty_values = true;
  if (logFormat && formatters) logFormat.formatters = [REQ_WITHOUT_QUERY_FORMATTER];
  return {
    name: 'envoy.access_loggers.file',
    typed_config: packAny(FILE_ACCESS_LOG, {
      path: p.path || DEV_STDOUT,
      ...(logFormat ? { log_format: logFormat } : {}),
    }),
  };
}

export const DEV_STDOUT = '/dev/stdout';

/** Chains istiod builds without an access log on their tcp_proxy. */
const UNLOGGED_CHAINS = new Set(['virtualOutbound-blackhole', 'virtualInbound-blackhole']);
const LOGGED_FILTERS: ReadonlyMap<string, string> = new Map([
  [FilterName.TcpProxy, TypeName.TcpProxy],
  [FilterName.HttpConnectionManager, TypeName.HttpConnectionManager],
]);

/** The access logs one kind of listener gets (the mesh's file log, or what Telemetry resolves to). */
export interface Loggers {
  /** On HCMs and tcp_proxies. */
  readonly core: readonly AccessLog[];
  /** On listeners: only when no filter chain matched (response flag NR). */
  readonly listener: readonly AccessLog[];
  /** Each filter with its logged copy: shared filters stay shared. */
  readonly filters: WeakMap<NetworkFilter, NetworkFilter>;
}
const loggersOf = new WeakMap<MeshAccessLog, Loggers>();

/** istiod's listenerAccessLogFilter: log at the listener only when no filter chain matched. */
const NO_ROUTE: NonNullable<AccessLog['filter']> = { response_flag_filter: { flags: ['NR'] } };

/** Loggers of these access logs: each on HCMs and tcp_proxies, and with the NR filter on listeners. */
export function loggersFor(logs: readonly AccessLog[]): Loggers {
  return { core: logs, listener: logs.map((l) => ({ ...l, filter: NO_ROUTE })), filters: new WeakMap() };
}

/** The mesh's `accessLogFile` loggers (istiod's legacy path, when no Telemetry applies). */
export function meshLoggers(log: MeshAccessLog | undefined): Loggers | undefined {
  if (!log) return undefined;
  let l = loggersOf.get(log);
  if (!l) {
    l = loggersFor([fileAccessLog(log)]);
    loggersOf.set(log, l);
  }
  return l;
}

/**
 * The listeners with these access logs (none: the same map). `listenerLevel` says which
 * listeners get the NR logger of their own: by default virtualOutbound and virtualInbound.
 */
export function withAccessLogs(
  logs: Loggers | undefined,
  listeners: Map<string, Listener>,
  listenerLevel: (l: Listener) => boolean = (l) => l.name === VIRTUAL_OUTBOUND || l.name === VIRTUAL_INBOUND,
): Map<string, Listener> {
  if (!logs || logs.core.length === 0) return listeners;
  const out = new Map<string, Listener>();
  for (const [name, l] of listeners) {
    const logged: Listener = { ...l };
    if (l.filter_chains) logged.filter_chains = l.filter_chains.map((c) => loggedChain(c, logs));
    if (l.default_filter_chain) logged.default_filter_chain = loggedChain(l.default_filter_chain, logs);
    if (listenerLevel(l)) logged.access_log = [...(l.access_log ?? []), ...logs.listener];
    out.set(name, logged);
  }
  return out;
}

function loggedChain(chain: FilterChain, logs: Loggers): FilterChain {
  if (!chain.filters?.length || UNLOGGED_CHAINS.has(chain.name ?? '')) return chain;
  return { ...chain, filters: chain.filters.map((f) => loggedFilter(f, logs)) };
}

function loggedFilter(f: NetworkFilter, logs: Loggers): NetworkFilter {
  const typeName = LOGGED_FILTERS.get(f.name ?? '');
  const any = f.typed_config as Any | null | undefined;
  if (!typeName || !any?.value) return f;
  let out = logs.filters.get(f);
  if (!out) {
    // The builders hand out encoded filters: decode, append the logger (istiod appends), encode again.
    const message = decodeMessage(typeName, any.value) as { access_log?: AccessLog[] };
    message.access_log = [...(message.access_log ?? []), ...logs.core];
    out = { ...f, typed_config: packAny(typeName, message) };
    logs.filters.set(f, out);
  }
  return out;
}

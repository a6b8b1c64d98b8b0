/**
 * The HttpConnectionManager filter of an inbound HTTP chain, packed fast. Of a port's HCM only the
 * inline route config names the service (its decorator); the rest (stat prefix, HTTP filters, the
 * inbound options) is the same for every workload with the same policies on that port. So the rest
 * is encoded once per port shape, split around field 4 (`route_config`, written after fields 1–2
 * and before the others), and each service's bytes are that head, its encoded route config and
 * that tail. Protobuf messages are the concatenation of their fields in field order, so the bytes
 * equal a full encode (test/compile/inbound-hcm.test.ts).
 */
import { encodeMessage, withPackedMessage, type HttpConnectionManager } from '../../xds/proto.js';
import { TypeName, typeUrl } from '../../xds/type-urls.js';
import { FilterName, networkFilter, type NetworkFilter } from './filters.js';
import { buildSidecarHcm, type SidecarHcmOptions } from './http-connection-manager.js';
import { header, joinFields } from '../../xds/wire/splice.js';

/** An HCM's encoding without `route_config`, split where that field goes; null: it cannot be split so. */
type Template = { readonly head: Uint8Array; readonly tail: Uint8Array } | null;

/** HttpConnectionManager.route_config. */
const ROUTE_CONFIG_FIELD = 4;

/** Per proxy headers and list of security filters (one list per workload policies), the templates by the options' other parts. */
const templates = new WeakMap<object, WeakMap<object, Map<string, Template>>>();
const NO_SECURITY = {};

/** `hcmFilter(buildSidecarHcm(opts))` for an inbound HCM with an inline route config. */
export function inboundHcmFilter(opts: SidecarHcmOptions & { readonly inbound: true }): NetworkFilter {
  const hcm = buildSidecarHcm(opts);
  const template = opts.routeConfig ? templateOf(opts) : null;
  if (!template || !opts.routeConfig)
    return networkFilter(FilterName.HttpConnectionManager, TypeName.HttpConnectionManager, hcm);
  const value = splice(template, encodeMessage(TypeName.RouteConfiguration, opts.routeConfig));
  // The message the bytes encode, for the acceptance check (it walks it rather than decode the bytes).
  const any = withPackedMessage({ type_url: typeUrl(TypeName.HttpConnectionManager), value }, hcm);
  return { name: FilterName.HttpConnectionManager, typed_config: any };
}

function templateOf(opts: SidecarHcmOptions): Template {
  const bySecurity = opts.securityFilters?.length ? opts.securityFilters : NO_SECURITY;
  let byHeaders = templates.get(opts.headers);
  if (!byHeaders) templates.set(opts.headers, (byHeaders = new WeakMap()));
  let table = byHeaders.get(bySecurity);
  if (!table) byHeaders.set(bySecurity, (table = new Map()));
  const key = `${opts.statPrefix}|${opts.http2 ? 'h2' : ''}`;
  let template = table.get(key);
  if (template === undefined) {
    if (table.size >= 4096) table.clear();
    table.set(key, (template = makeTemplate(opts)));
  }
  return template;
}

function makeTemplate(opts: SidecarHcmOptions): Template {
  const { routeConfig: _, ...rest } = opts;
  const hcm: HttpConnectionManager = buildSidecarHcm(rest);
  const whole = encodeMessage(TypeName.HttpConnectionManager, hcm);
  // Fields 1–3 (codec, stat prefix, rds) come before field 4; an inbound HCM has no rds.
  if (hcm.rds !== undefined) return null;
  const head = encodeMessage(TypeName.HttpConnectionManager, {
    codec_type: hcm.codec_type,
    stat_prefix: hcm.stat_prefix,
  });
  for (let i = 0; i < head.length; i++) if (whole[i] !== head[i]) return null;
  return { head, tail: whole.subarray(head.length) };
}

const splice = (t: NonNullable<Template>, routeConfig: Uint8Array): Uint8Array =>
  joinFields([t.head, header(ROUTE_CONFIG_FIELD, routeConfig.length), routeConfig, t.tail]);

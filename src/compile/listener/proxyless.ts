/**
 * Listeners for proxyless gRPC clients (@grpc/grpc-js-xds, grpc-go…; istiod: grpcgen/lds.go).
 * A client dialling `xds:///<host>:<port>` asks for the Listener of exactly that name; it must be
 * an api_listener whose HttpConnectionManager fetches routes over RDS and ends with the router.
 *
 * Only HTTP-family ports get one (their route configs exist). Neither depends on the client
 * namespace: every proxyless client shares one `grpc` group (targets are FQDN `host:port`).
 */
import type { CompileContext } from '../context.js';
import { proxylessPorts } from '../route/proxyless-clusters.js';
import {
  encodeMessage,
  envoy,
  packAny,
  withPackedMessage,
  type Any,
  type HttpConnectionManager,
  type Listener,
} from '../../xds/proto.js';
import { TypeName, typeUrl } from '../../xds/type-urls.js';
import { deepFreeze } from '../intern.js';
import { sortedByName } from '../sorted.js';
import { PROXYLESS_HTTP_FILTERS, socketAddress, type HttpFilter } from './filters.js';
import { header, headerLength, joinFields } from '../../xds/wire/splice.js';

/** RDS over ADS, as istiod's grpcgen: one frozen copy for every listener. */
const ADS_SOURCE = deepFreeze({ ads: {}, resource_api_version: envoy.config.core.v3.ApiVersion.V3 });

export function buildProxylessListeners(ctx: CompileContext): Map<string, Listener> {
  const listeners = new Map<string, Listener>();
  // Only ports whose cluster proxyless clients get (EDS: not headless, ExternalName or PASSTHROUGH).
  for (const service of ctx.model.services) {
    if (service.externalName !== undefined) continue;
    for (const { port, name } of proxylessPorts(ctx, service)) {
      listeners.set(name, {
        name,
        // Informational for gRPC (it never binds); istiod puts the service address here.
        address: socketAddress(service.clusterIP ?? '0.0.0.0', port),
        api_listener: { api_listener: proxylessHcm(name) },
      });
    }
  }
  return sortedByName(listeners);
}

const hcmOf = (routeConfigName: string): HttpConnectionManager => ({
  http_filters: PROXYLESS_HTTP_FILTERS as HttpFilter[],
  rds: { route_config_name: routeConfigName, config_source: ADS_SOURCE },
});

/**
 * The HCM of a proxyless listener, packed fast: only the RDS name differs between listeners, so the
 * encoded config source (Rds field 1) and HTTP filters (HCM field 5) are kept and the name spliced
 * in (src/xds/wire/splice.ts). Kept parts that do not give a full encode's bytes are not used.
 */
function proxylessHcm(routeConfigName: string): Any {
  const hcm = hcmOf(routeConfigName);
  if (!KEPT.sound || routeConfigName === '') return packAny(TypeName.HttpConnectionManager, hcm);
  const value = hcmBytes(KEPT, routeConfigName);
  // The message the bytes encode, for the acceptance check (it walks it rather than decode the bytes).
  return withPackedMessage({ type_url: typeUrl(TypeName.HttpConnectionManager), value }, hcm);
}

/** HttpConnectionManager.rds and Rds.route_config_name. */
const HCM_RDS_FIELD = 3;
const RDS_NAME_FIELD = 2;
const RDS_TYPE = 'envoy.extensions.filters.network.http_connection_manager.v3.Rds';
const utf8 = new TextEncoder();

interface Kept {
  readonly configSource: Uint8Array;
  readonly filters: Uint8Array;
}

/** Fields 3 (rds) then 5 (http_filters); within Rds, 1 (config_source) then 2 (route_config_name). */
function hcmBytes(kept: Kept, routeConfigName: string): Uint8Array {
  const name = utf8.encode(routeConfigName);
  const nameHeader = header(RDS_NAME_FIELD, name.length);
  const rdsLength = kept.configSource.length + headerLength(nameHeader) + name.length;
  return joinFields([header(HCM_RDS_FIELD, rdsLength), kept.configSource, nameHeader, name, kept.filters]);
}

const KEPT = ((): Kept & { readonly sound: boolean } => {
  const kept: Kept = {
    configSource: encodeMessage(RDS_TYPE, { config_source: ADS_SOURCE }),
    filters: encodeMessage(TypeName.HttpConnectionManager, { http_filters: PROXYLESS_HTTP_FILTERS }),
  };
  // Checked once, on a sample name, against the whole message's encoding.
  const sample = 'sample.ns.svc.cluster.local:8080';
  const spliced = hcmBytes(kept, sample);
  const whole = encodeMessage(TypeName.HttpConnectionManager, hcmOf(sample));
  return { ...kept, sound: spliced.length === whole.length && spliced.every((b, i) => b === whole[i]) };
})();

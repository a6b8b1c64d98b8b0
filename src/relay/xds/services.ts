/**
 * grpc-js service definitions of the xDS services the relay serves: ADS (SotW + delta) and the
 * per-type CDS/EDS/LDS/RDS services. Messages go through the static protobuf codecs of
 * src/xds/proto.ts (no proto-loader). A response given as bytes is written as is: the relay
 * encodes response bodies once and reuses them (see responses.ts).
 */
import type * as grpc from '@grpc/grpc-js';
import { decodeMessage, encodeMessage } from '../../xds/proto.js';
import type { XdsType } from '../../xds/type-urls.js';
import type { RelayType } from './relay-type.js';

export const MSG = {
  Request: 'envoy.service.discovery.v3.DiscoveryRequest',
  Response: 'envoy.service.discovery.v3.DiscoveryResponse',
  DeltaRequest: 'envoy.service.discovery.v3.DeltaDiscoveryRequest',
  DeltaResponse: 'envoy.service.discovery.v3.DeltaDiscoveryResponse',
} as const;

export interface XdsMethod {
  readonly service: string;
  readonly method: string;
  readonly delta: boolean;
  /** The one type a per-type service serves; undefined for ADS (type taken from each request). */
  readonly fixedType?: RelayType;
}

const PER_TYPE: readonly [XdsType, string, string][] = [
  ['clusters', 'envoy.service.cluster.v3.ClusterDiscoveryService', 'Clusters'],
  ['endpoints', 'envoy.service.endpoint.v3.EndpointDiscoveryService', 'Endpoints'],
  ['listeners', 'envoy.service.listener.v3.ListenerDiscoveryService', 'Listeners'],
  ['routes', 'envoy.service.route.v3.RouteDiscoveryService', 'Routes'],
];

export const ADS_SERVICE = 'envoy.service.discovery.v3.AggregatedDiscoveryService';

/** SDS (gateway credentials from Kubernetes Secrets): the same DiscoveryRequest/Response messages. */
export const SDS_SERVICE = 'envoy.service.secret.v3.SecretDiscoveryService';

export const XDS_METHODS: readonly XdsMethod[] = [
  { service: ADS_SERVICE, method: 'StreamAggregatedResources', delta: false },
  { service: ADS_SERVICE, method: 'DeltaAggregatedResources', delta: true },
  ...PER_TYPE.flatMap(([fixedType, service, suffix]): XdsMethod[] => [
    { service, method: `Stream${suffix}`, delta: false, fixedType },
    { service, method: `Delta${suffix}`, delta: true, fixedType },
  ]),
  { service: SDS_SERVICE, method: 'StreamSecrets', delta: false, fixedType: 'secrets' },
  { service: SDS_SERVICE, method: 'DeltaSecrets', delta: true, fixedType: 'secrets' },
];

const toBuffer = (bytes: Uint8Array): Buffer =>
  Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** Serializes a message object, or passes pre-encoded bytes through untouched. */
const serializer =
  (typeName: string) =>
  (value: object | Uint8Array): Buffer =>
    value instanceof Uint8Array ? toBuffer(value) : toBuffer(encodeMessage(typeName, value));
const deserializer =
  (typeName: string) =>
  (bytes: Buffer): object =>
    decodeMessage(typeName, bytes);

/** The grpc-js definition of one service (both its SotW and delta bidi methods). */
export function serviceDefinition(service: string): grpc.ServiceDefinition {
  const def: Record<string, grpc.MethodDefinition<object, object | Uint8Array>> = {};
  for (const m of XDS_METHODS.filter((x) => x.service === service)) {
    const req = m.delta ? MSG.DeltaRequest : MSG.Request;
    const res = m.delta ? MSG.DeltaResponse : MSG.Response;
    def[m.method] = {
      path: `/${service}/${m.method}`,
      requestStream: true,
      responseStream: true,
      requestSerialize: serializer(req),
      requestDeserialize: deserializer(req),
      responseSerialize: serializer(res),
      responseDeserialize: deserializer(res),
      originalName: m.method,
    };
  }
  return def as grpc.ServiceDefinition;
}

export const XDS_SERVICES: readonly string[] = [...new Set(XDS_METHODS.map((m) => m.service))];

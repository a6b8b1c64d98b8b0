/**
 * Provenance metadata: istiod marks every route and cluster made from an Istio object with
 * `filter_metadata.istio.config = /apis/networking.istio.io/v1/namespaces/<ns>/<kind>/<name>`,
 * which `istioctl` and users' tooling read back. meshsnap does the same.
 */
import { configPath, type IstioObject } from '../model/istio.js';
import type { MeshService } from '../model/service-model.js';
import { toStruct, type google, type Metadata, type JsonValue } from '../xds/proto.js';
import { deepFreeze, InternTable } from './intern.js';

/** Per source object: every route of a VirtualService carries the same metadata. */
const bySource = new WeakMap<IstioObject, Metadata>();

export function istioConfigMetadata(source: IstioObject, extra?: Readonly<Record<string, JsonValue>>): Metadata {
  if (extra !== undefined) return istioMetadata({ ...extra, config: configPath(source.kind, source.meta) });
  let metadata = bySource.get(source);
  if (!metadata) bySource.set(source, (metadata = istioMetadata({ config: configPath(source.kind, source.meta) })));
  return metadata;
}

/** Equal metadata (clusters of one service, endpoints of one workload) is built once and shared. */
const shared = new InternTable<Metadata>();

/** Metadata carrying only other `istio` keys (e.g. `services` on clusters), without a config source. */
export function istioMetadata(values: Readonly<Record<string, JsonValue>>): Metadata {
  return shared.get(JSON.stringify(values), () => ({ filter_metadata: { istio: toStruct(values) } }));
}

/** What Istio's telemetry reads to name a cluster's destination service. */
export const serviceTelemetry = (s: MeshService): JsonValue => ({
  host: s.hostname,
  name: s.name,
  namespace: s.namespace,
});

type Value = google.protobuf.Value.$Properties;

const servicesValues = new WeakMap<MeshService, Value>();

/**
 * The `services: [service]` field's value, built once per service and shared (frozen) by its
 * clusters' metadata: `toStruct({ services: [serviceTelemetry(service)] })`'s, fields in its
 * (sorted) order, with the namespace's one shared value.
 */
function servicesValue(service: MeshService): Value {
  let value = servicesValues.get(service);
  if (!value) {
    const fields = {
      host: { stringValue: service.hostname },
      name: { stringValue: service.name },
      namespace: stringValue(service.namespace),
    };
    value = deepFreeze({ listValue: { values: [{ structValue: { fields } }] } });
    servicesValues.set(service, value);
  }
  return value;
}

/** Struct string values that recur across metadata (namespaces, config paths, subsets), shared. */
const stringValues = new InternTable<Value>();
const stringValue = (s: string): Value => stringValues.get(s, () => ({ stringValue: s }));

const ofService = new WeakMap<MeshService, Metadata>();

/**
 * `istioMetadata({ services: [service] })`, found once per service (its outbound and inbound
 * clusters carry it) around the service's shared `services` value: no JSON key, as it is unique.
 */
export function serviceMetadata(service: MeshService): Metadata {
  let metadata = ofService.get(service);
  if (!metadata) {
    metadata = deepFreeze({ filter_metadata: { istio: { fields: { services: servicesValue(service) } } } });
    ofService.set(service, metadata);
  }
  return metadata;
}

/**
 * `istioConfigMetadata(source, { services: [service], alpn_override?, subset? })` of a service's
 * cluster made from a DestinationRule, without a JSON key per cluster: the fields are written in
 * the sorted order toStruct gives (the encoding is the same), and the `services` value is the
 * service's shared one. The caller shares the result between the clusters of a service with the
 * same subset; the main one is also remembered per service, for its inbound cluster.
 */
export function ruleClusterMetadata(
  service: MeshService,
  source: IstioObject,
  subset: string,
  alpnOverride: boolean,
): Metadata {
  const main = !subset && !alpnOverride;
  const known = main ? mainRuleMetadata.get(service) : undefined;
  if (known?.source === source) return known.metadata;
  const fields: Record<string, Value> = {};
  if (alpnOverride) fields.alpn_override = stringValue('false');
  fields.config = stringValue(configPath(source.kind, source.meta));
  fields.services = servicesValue(service);
  if (subset) fields.subset = stringValue(subset);
  const metadata = deepFreeze({ filter_metadata: { istio: { fields } } });
  if (main) mainRuleMetadata.set(service, { source, metadata });
  return metadata;
}

/** A service's main cluster's (no subset, no ALPN override), by service: its outbound and inbound clusters share it. */
const mainRuleMetadata = new WeakMap<MeshService, { readonly source: IstioObject; readonly metadata: Metadata }>();

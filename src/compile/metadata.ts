/**
 * Provenance metadata: istiod marks every route and cluster made from an Istio object with
 * `filter_metadata.istio.config = /apis/networking.istio.io/v1/namespaces/<ns>/<kind>/<name>`,
 * which `istioctl` and users' tooling read back. meshsnap does the same.
 */
import { configPath, type IstioObject } from '../model/istio.js';
import { toStruct, type Metadata, type JsonValue } from '../xds/proto.js';
import { InternTable } from './intern.js';

export function istioConfigMetadata(source: IstioObject, extra: Readonly<Record<string, JsonValue>> = {}): Metadata {
  return istioMetadata({ ...extra, config: configPath(source.kind, source.meta) });
}

/** Equal metadata (clusters of one service, endpoints of one workload) is built once and shared. */
const shared = new InternTable<Metadata>();

/** Metadata carrying only other `istio` keys (e.g. `services` on clusters), without a config source. */
export function istioMetadata(values: Readonly<Record<string, JsonValue>>): Metadata {
  return shared.get(JSON.stringify(values), () => ({ filter_metadata: { istio: toStruct(values) } }));
}

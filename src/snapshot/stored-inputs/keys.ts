/**
 * The key scheme of stored inputs: every object is stored under `Kind/namespace/name` (namespace
 * empty for cluster-scoped kinds) in one of two layers — `endpoints` (EndpointSlices, Endpoints,
 * Pods, Nodes) or `config` (Istio config, Services, Namespaces, mesh config, anything else) — so a
 * reader sees at once whether a version changed config or only endpoints. A document without a
 * kind or a name cannot be keyed: it is stored under `~//<its digest>` in the layer of its kind.
 */
import { isRecord, own, type Raw } from './raw.js';

export type InputLayer = 'config' | 'endpoints';
export const INPUT_LAYERS: readonly InputLayer[] = ['config', 'endpoints'];

export interface ObjectKey {
  readonly kind: string;
  /** "" for cluster-scoped objects. */
  readonly namespace: string;
  readonly name: string;
}

const ENDPOINT_KINDS = new Set(['EndpointSlice', 'Endpoints', 'Pod', 'Node']);

export const layerOf = (kind: string): InputLayer => (ENDPOINT_KINDS.has(kind) ? 'endpoints' : 'config');

/** `Kind/namespace/name` (namespace empty for cluster-scoped kinds). */
export const keyString = (k: ObjectKey): string => `${k.kind}/${k.namespace}/${k.name}`;

export function parseKeyString(s: string): ObjectKey | undefined {
  const m = /^([^/]+)\/([^/]*)\/([^/]+)$/.exec(s);
  return m ? { kind: m[1] as string, namespace: m[2] as string, name: m[3] as string } : undefined;
}

/** The kind of the key of a document that has no kind or name (`~//sha256:…`). */
export const UNKEYED_KIND = '~';

/**
 * The key kind of a Gateway API Gateway (`gateway.networking.k8s.io`), istiod's name for it: an
 * Istio Gateway of the same namespace and name must not share its key.
 */
export const KUBERNETES_GATEWAY_KIND = 'KubernetesGateway';

const isGatewayApiGateway = (kind: string, raw: Raw): boolean => {
  const apiVersion = own(raw, 'apiVersion');
  return kind === 'Gateway' && typeof apiVersion === 'string' && apiVersion.startsWith('gateway.networking.k8s.io/');
};

/** kind/namespace/name of a raw object, or undefined when it has no kind or name. */
export function objectKeyOf(raw: Raw): ObjectKey | undefined {
  const written = own(raw, 'kind');
  const kind = typeof written === 'string' && isGatewayApiGateway(written, raw) ? KUBERNETES_GATEWAY_KIND : written;
  const meta = own(raw, 'metadata');
  if (typeof kind !== 'string' || kind === '' || !isRecord(meta)) return undefined;
  const name = own(meta, 'name');
  const ns = own(meta, 'namespace');
  if (typeof name !== 'string' || name === '') return undefined;
  return { kind, namespace: typeof ns === 'string' ? ns : '', name };
}

/**
 * What the fake API server knows how to serve: one entry per resource (group + plural), with
 * every version the real cluster could serve it in. Which group-versions are *currently* served
 * is runtime state (see ServedVersions) so tests can play "CRD not installed, installed later".
 */

export interface ResourceType {
  /** '' for the core group. */
  readonly group: string;
  readonly versions: readonly string[];
  readonly kind: string;
  readonly plural: string;
  readonly singular: string;
  readonly namespaced: boolean;
}

const res = (group: string, versions: string[], kind: string, plural: string, namespaced = true): ResourceType => ({
  group,
  versions,
  kind,
  plural,
  singular: kind.toLowerCase(),
  namespaced,
});

const ISTIO_VERSIONS = ['v1', 'v1beta1', 'v1alpha3'];

/** Every resource the watcher reads, plus CRDs so a watcher may watch for installs. */
export const DEFAULT_RESOURCES: readonly ResourceType[] = [
  res('', ['v1'], 'Service', 'services'),
  res('', ['v1'], 'Endpoints', 'endpoints'),
  res('', ['v1'], 'Pod', 'pods'),
  res('', ['v1'], 'Namespace', 'namespaces', false),
  res('', ['v1'], 'Node', 'nodes', false),
  res('', ['v1'], 'ConfigMap', 'configmaps'),
  res('discovery.k8s.io', ['v1'], 'EndpointSlice', 'endpointslices'),
  res('networking.istio.io', ISTIO_VERSIONS, 'VirtualService', 'virtualservices'),
  res('networking.istio.io', ISTIO_VERSIONS, 'DestinationRule', 'destinationrules'),
  res('networking.istio.io', ISTIO_VERSIONS, 'Gateway', 'gateways'),
  res('apiextensions.k8s.io', ['v1'], 'CustomResourceDefinition', 'customresourcedefinitions', false),
];

const GATEWAY_API = 'gateway.networking.k8s.io';

/**
 * The Gateway API kinds (not in DEFAULT_RESOURCES: a test that wants them passes
 * `resources: [...DEFAULT_RESOURCES, ...GATEWAY_API_RESOURCES]`). They have a status subresource.
 */
export const GATEWAY_API_RESOURCES: readonly ResourceType[] = [
  res(GATEWAY_API, ['v1', 'v1beta1'], 'GatewayClass', 'gatewayclasses', false),
  res(GATEWAY_API, ['v1', 'v1beta1'], 'Gateway', 'gateways'),
  res(GATEWAY_API, ['v1', 'v1beta1'], 'HTTPRoute', 'httproutes'),
  res(GATEWAY_API, ['v1'], 'GRPCRoute', 'grpcroutes'),
  res(GATEWAY_API, ['v1alpha2'], 'TCPRoute', 'tcproutes'),
  res(GATEWAY_API, ['v1alpha2'], 'TLSRoute', 'tlsroutes'),
  res(GATEWAY_API, ['v1beta1'], 'ReferenceGrant', 'referencegrants'),
];

/** Resources whose writes go through a `status` subresource: PUT/PATCH .../status change only the status. */
export const hasStatusSubresource = (r: ResourceType): boolean =>
  r.group === GATEWAY_API && r.kind !== 'ReferenceGrant';

/** Groups whose types are CustomResourceDefinitions (their install shows up as CRD objects). */
export const CRD_GROUPS: ReadonlySet<string> = new Set(['networking.istio.io', GATEWAY_API]);

export const groupVersion = (group: string, version: string): string => (group ? `${group}/${version}` : version);

/** Splits an apiVersion ("v1", "networking.istio.io/v1beta1") into group and version. */
export function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

export class Catalog {
  private readonly byPlural = new Map<string, ResourceType>();
  private readonly byKind = new Map<string, ResourceType>();

  constructor(readonly resources: readonly ResourceType[]) {
    for (const r of resources) {
      this.byPlural.set(`${r.group}/${r.plural}`, r);
      this.byKind.set(`${r.group}/${r.kind}`, r);
    }
  }

  byResource(group: string, plural: string): ResourceType | undefined {
    return this.byPlural.get(`${group}/${plural}`);
  }

  /** Looks a type up by group + kind, or by kind alone when no group is given (kinds are unique here). */
  byKindName(kind: string, group?: string): ResourceType | undefined {
    if (group !== undefined) return this.byKind.get(`${group}/${kind}`);
    return this.resources.find((r) => r.kind === kind);
  }

  /** Every group-version any resource could be served in: the initial "everything installed" state. */
  allGroupVersions(): string[] {
    const out = new Set<string>();
    for (const r of this.resources) for (const v of r.versions) out.add(groupVersion(r.group, v));
    return [...out];
  }
}

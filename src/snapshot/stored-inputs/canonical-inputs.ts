/**
 * The canonical form of a *validated* InputSet: every object without its origin (file/index),
 * each list sorted by kind/namespace/name. Equal InputSets give equal canonical forms however
 * they were built (tests use it to check that patched InputSets equal rebuilt ones).
 *
 * NOT the snapshot's inputs digest: that is the root of the stored inputs tree
 * (./tree.ts, `meshsnap.inputs/v2`), maintained incrementally. This form costs
 * a pass over every object and is for tests and debugging only.
 */
import { canonicalJson } from '../../canonical-json.js';
import { digestOf, utf8Bytes, type Hasher } from '../digest.js';
import type { InputSet } from '../../model/inputs.js';

interface Named {
  readonly meta: { readonly namespace: string; readonly name: string };
  readonly origin?: unknown;
}

const byNamespaceName = (a: Named, b: Named): number =>
  a.meta.namespace < b.meta.namespace
    ? -1
    : a.meta.namespace > b.meta.namespace
      ? 1
      : a.meta.name < b.meta.name
        ? -1
        : a.meta.name > b.meta.name
          ? 1
          : 0;

function strip<T extends Named>(items: readonly T[]): Omit<T, 'origin'>[] {
  return [...items].sort(byNamespaceName).map((item) => {
    const copy: Record<string, unknown> = { ...(item as object) };
    delete copy.origin;
    return copy as Omit<T, 'origin'>;
  });
}

export const VALIDATED_INPUTS_SCHEMA = 'meshsnap.validated-inputs/v1';

export function canonicalInputs(inputs: InputSet): Record<string, unknown> {
  return {
    schema: VALIDATED_INPUTS_SCHEMA,
    meshConfig: inputs.meshConfig,
    namespaces: strip(inputs.namespaces),
    nodes: strip(inputs.nodes),
    services: strip(inputs.services),
    endpointSlices: strip(inputs.endpointSlices),
    endpoints: strip(inputs.endpoints),
    pods: strip(inputs.pods),
    virtualServices: strip(inputs.virtualServices),
    destinationRules: strip(inputs.destinationRules),
    gateways: strip(inputs.gateways),
    // Only when present: the canonical form of a mesh without security policies is unchanged.
    ...(inputs.authorizationPolicies.length ? { authorizationPolicies: strip(inputs.authorizationPolicies) } : {}),
    ...(inputs.peerAuthentications.length ? { peerAuthentications: strip(inputs.peerAuthentications) } : {}),
    ...(inputs.requestAuthentications.length ? { requestAuthentications: strip(inputs.requestAuthentications) } : {}),
    ...(inputs.serviceEntries.length ? { serviceEntries: strip(inputs.serviceEntries) } : {}),
    ...(inputs.workloadEntries.length ? { workloadEntries: strip(inputs.workloadEntries) } : {}),
    ...(inputs.workloadGroups.length ? { workloadGroups: strip(inputs.workloadGroups) } : {}),
    ...gatewayApiLists(inputs),
    ...(inputs.sidecars.length ? { sidecars: strip(inputs.sidecars) } : {}),
    ...(inputs.telemetries.length ? { telemetries: strip(inputs.telemetries) } : {}),
    ...(inputs.envoyFilters.length ? { envoyFilters: strip(inputs.envoyFilters) } : {}),
    ...(inputs.ingresses.length ? { ingresses: strip(inputs.ingresses) } : {}),
    ...(inputs.ingressClasses.length ? { ingressClasses: strip(inputs.ingressClasses) } : {}),
  };
}

export function inputsDigest(inputs: InputSet, hasher?: Hasher): string {
  return digestOf(utf8Bytes(canonicalJson(canonicalInputs(inputs))), hasher);
}

/** The Gateway API lists, each only when present (the canonical form of a mesh without them is unchanged). */
function gatewayApiLists(inputs: InputSet): Record<string, unknown> {
  const lists: Record<string, readonly Named[]> = {
    gatewayClasses: inputs.gatewayClasses,
    kubernetesGateways: inputs.kubernetesGateways,
    httpRoutes: inputs.httpRoutes,
    grpcRoutes: inputs.grpcRoutes,
    tcpRoutes: inputs.tcpRoutes,
    tlsRoutes: inputs.tlsRoutes,
    referenceGrants: inputs.referenceGrants,
  };
  return Object.fromEntries(Object.entries(lists).flatMap(([k, v]) => (v.length ? [[k, strip(v)]] : [])));
}

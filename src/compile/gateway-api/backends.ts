/**
 * backendRefs → VirtualService destinations (istiod's buildDestination). A Service backend is
 * `<name>.<ns>.svc.<suffix>` on the given port. A backend that cannot be used — a kind other than
 * Service (InvalidKind), a Service or port that does not exist (BackendNotFound), another
 * namespace without a ReferenceGrant (RefNotPermitted; not checked for mesh routes, as istiod) —
 * is left out and reported on ResolvedRefs; a rule left without a usable backend answers 500, as
 * the spec asks. A Service named by its hostname is a hard error (InvalidDestination).
 */
import { serviceHostname } from '../../model/build.js';
import type { BackendObjectReference } from '../../model/gateway-api.js';
import type { Destination } from '../../model/istio.js';
import type { Service } from '../../model/k8s.js';
import type { ReferenceGrants } from './reference-grants.js';
import type { ConfigError } from './status.js';

export interface BackendContext {
  readonly services: ReadonlyMap<string, Service>;
  readonly grants: ReferenceGrants;
  readonly domainSuffix: string;
  /** The route's kind and namespace (the referrer a ReferenceGrant names). */
  readonly routeKind: string;
  readonly routeNamespace: string;
  /** Gateway routes need ReferenceGrants for other namespaces; mesh routes do not (istiod). */
  readonly enforceGrants: boolean;
}

export type BackendResult =
  | { readonly destination: Destination }
  /** Left out; the rule goes on without it. */
  | { readonly invalid: ConfigError }
  /** The whole route cannot be converted for this kind of parent. */
  | { readonly fatal: ConfigError };

export function resolveBackend(ctx: BackendContext, ref: BackendObjectReference): BackendResult {
  const ns = ref.namespace ?? ctx.routeNamespace;
  if (ctx.enforceGrants && ns !== ctx.routeNamespace) {
    const allowed = ctx.grants.allowed(
      { group: 'gateway.networking.k8s.io', kind: ctx.routeKind, namespace: ctx.routeNamespace },
      { group: ref.group, kind: ref.kind, namespace: ns, name: ref.name },
    );
    if (!allowed)
      return {
        invalid: {
          reason: 'RefNotPermitted',
          message: `backendRef ${ref.name}/${ns} not accessible to a ${ctx.routeKind} in namespace "${ctx.routeNamespace}" (missing a ReferenceGrant?)`,
        },
      };
  }
  if (ref.group !== '' || ref.kind !== 'Service')
    return {
      invalid: {
        reason: 'InvalidKind',
        message: `referencing unsupported backendRef: group "${ref.group}" kind "${ref.kind}"`,
      },
    };
  if (ref.name.includes('.'))
    return {
      fatal: {
        reason: 'InvalidDestination',
        message: 'service name invalid; the name of the Service must be used, not the hostname.',
      },
    };
  const host = serviceHostname(ref.name, ns, ctx.domainSuffix);
  const service = ctx.services.get(`${ns}/${ref.name}`);
  if (!service) return { invalid: { reason: 'BackendNotFound', message: `backend(${host}) not found` } };
  if (ref.port === undefined)
    return { fatal: { reason: 'InvalidDestination', message: 'port is required in backendRef' } };
  if (!service.ports.some((p) => p.port === ref.port))
    return { invalid: { reason: 'BackendNotFound', message: `backend(${host}) has no port ${ref.port}` } };
  return { destination: { host, port: { number: ref.port } } };
}

/**
 * The Gateway API → Istio config conversion, run before the translators (as istiod's
 * pilot/pkg/config/kube/gateway does): Gateways of classes meshsnap owns become one Istio Gateway
 * per listener (listeners.ts), and HTTPRoutes, GRPCRoutes, TCPRoutes and TLSRoutes attached to
 * them — or to a Service, for the mesh (GAMMA) — become VirtualServices (virtual-services.ts).
 * Routers, listeners, TLS, explain and show then work on them unchanged. Every object meshsnap is
 * responsible for gets its status as an `info` diagnostic (code `gateway-api-status`), and a route
 * problem a warning naming the route's field. Pure.
 */
import { type Diagnostics, objectAt } from '../../model/diagnostics.js';
import type { Gateway } from '../../model/gateway.js';
import {
  ISTIO_GATEWAY_CONTROLLER,
  OWN_CONTROLLERS,
  type GatewayApiRoute,
  type GRPCRoute,
  type HTTPRoute,
} from '../../model/gateway-api.js';
import type { InputSet } from '../../model/inputs.js';
import type { VirtualService } from '../../model/istio.js';
import type { Service } from '../../model/k8s.js';
import type { BackendContext } from './backends.js';
import { gatewayClassStatus, ownedClasses } from './classes.js';
import { gatewayDeployment, type GatewayDeployment } from './deployment.js';
import { gatewayStatus } from './gateway-status.js';
import { convertGrpcRules } from './grpc-rules.js';
import { convertHttpRules } from './http-rules.js';
import { convertL4Rules } from './l4-rules.js';
import { piecesFor, type Converted } from './pieces.js';
import { reportProblems, reportStatus } from './report.js';
import { convertListener, type ListenerParent, type ListenerResult } from './listeners.js';
import { routeParents, type RouteParent } from './parents.js';
import { ReferenceGrants } from './reference-grants.js';
import { routeStatus } from './route-status.js';
import { mergePieces, type Piece } from './virtual-services.js';

const hasGatewayApi = (i: InputSet): boolean =>
  i.gatewayClasses.length + i.kubernetesGateways.length + i.httpRoutes.length + i.grpcRoutes.length > 0 ||
  i.tcpRoutes.length + i.tlsRoutes.length > 0;

/** The inputs with the Gateways and VirtualServices the Gateway API objects stand for added. */
export function convertGatewayApi(inputs: InputSet, diags: Diagnostics): InputSet {
  if (!hasGatewayApi(inputs)) return inputs;
  const suffix = inputs.meshConfig.domainSuffix;
  const classes = ownedClasses(inputs.gatewayClasses);
  for (const c of inputs.gatewayClasses) if (classes.has(c.meta.name)) reportStatus(diags, c, gatewayClassStatus(c));

  const grants = new ReferenceGrants(inputs.referenceGrants);
  const services = new Map<string, Service>(inputs.services.map((s) => [`${s.meta.namespace}/${s.meta.name}`, s]));
  const servicesByHostname = new Map<string, Service>(
    inputs.services.map((s) => [`${s.meta.name}.${s.meta.namespace}.svc.${suffix}`, s]),
  );

  const gateways: {
    gw: (typeof inputs.kubernetesGateways)[number];
    controller: string;
    listeners: ListenerResult[];
    deployment: GatewayDeployment;
  }[] = [];
  const listenersOf = new Map<string, ListenerParent[]>();
  const controllerOf = new Map<string, string>();
  const generated: Gateway[] = [];
  for (const gw of inputs.kubernetesGateways) {
    const controller = classes.get(gw.spec.gatewayClassName);
    if (!controller) {
      diags.info({
        code: 'gateway-class-not-handled',
        message: `GatewayClass ${gw.spec.gatewayClassName} is not handled by meshsnap (controllers ${OWN_CONTROLLERS.join(', ')}); the Gateway is left alone`,
        ...objectAt('Gateway', gw, 'spec.gatewayClassName'),
      });
      continue;
    }
    const deployment = gatewayDeployment(gw, servicesByHostname, suffix);
    const listeners = gw.spec.listeners.map((l) =>
      convertListener(gw, l, deployment.selector, inputs.namespaces, grants),
    );
    const key = `${gw.meta.namespace}/${gw.meta.name}`;
    listenersOf.set(
      key,
      listeners.flatMap((l) => (l.parent ? [l.parent] : [])),
    );
    controllerOf.set(key, controller);
    for (const l of listeners) if (l.server) generated.push(l.server);
    gateways.push({ gw, controller, listeners, deployment });
  }

  const pieces: Piece[] = [];
  const attached = new Map<string, Set<string>>();
  const routes: readonly GatewayApiRoute[] = [
    ...inputs.httpRoutes,
    ...inputs.grpcRoutes,
    ...inputs.tcpRoutes,
    ...inputs.tlsRoutes,
  ];
  for (const route of routes) {
    const parents = routeParents(route, { listeners: listenersOf, services });
    if (!parents.length) continue;
    const accepted = parents.filter((p) => !p.denied);
    for (const p of accepted) {
      if (p.parent.mesh) continue;
      const k = `${p.parent.gateway.meta.namespace}/${p.parent.gateway.meta.name}/${p.parent.listener.name}`;
      const set = attached.get(k) ?? new Set<string>();
      set.add(`${route.kind}/${route.meta.namespace}/${route.meta.name}`);
      attached.set(k, set);
    }
    const convert = (mesh: boolean) => convertRoute(route, backendContext(route, mesh));
    const meshResult = accepted.some((p) => p.parent.mesh) ? convert(true) : undefined;
    const gwResult = accepted.some((p) => !p.parent.mesh) ? convert(false) : undefined;
    reportProblems(diags, route, [...(gwResult?.problems ?? []), ...(meshResult?.problems ?? [])]);
    const status = routeStatus(
      route,
      parents,
      {
        ...(meshResult?.fatal || meshResult?.error ? { mesh: meshResult.fatal ?? meshResult.error } : {}),
        ...(gwResult?.fatal || gwResult?.error ? { gateway: gwResult.fatal ?? gwResult.error } : {}),
      },
      (p) =>
        p.parent.mesh
          ? ISTIO_GATEWAY_CONTROLLER
          : (controllerOf.get(`${p.parent.gateway.meta.namespace}/${p.parent.gateway.meta.name}`) ??
            ISTIO_GATEWAY_CONTROLLER),
    );
    reportStatus(diags, route, status);
    for (const p of [...accepted].sort(byInternalName)) {
      const result = p.parent.mesh ? meshResult : gwResult;
      if (result && !result.fatal) pieces.push(...piecesFor(route, p, result, suffix));
    }
  }

  for (const { gw, listeners, deployment } of gateways) {
    const key = `${gw.meta.namespace}/${gw.meta.name}`;
    reportStatus(
      diags,
      gw,
      gatewayStatus(gw, listeners, (l) => attached.get(`${key}/${l}`)?.size ?? 0, deployment),
    );
  }

  const virtualServices: VirtualService[] = mergePieces(pieces);
  return {
    ...inputs,
    gateways: [...inputs.gateways, ...generated].sort(byNamespaceName),
    virtualServices: [...inputs.virtualServices, ...virtualServices].sort(byNamespaceName),
  };

  function backendContext(route: GatewayApiRoute, mesh: boolean): BackendContext {
    return {
      services,
      grants,
      domainSuffix: suffix,
      routeKind: route.kind,
      routeNamespace: route.meta.namespace,
      enforceGrants: !mesh,
    };
  }
}

function convertRoute(route: GatewayApiRoute, ctx: BackendContext): Converted {
  switch (route.kind) {
    case 'HTTPRoute':
      return convertHttpRules(route as HTTPRoute, ctx);
    case 'GRPCRoute':
      return convertGrpcRules(route as GRPCRoute, ctx);
    default:
      return convertL4Rules(route, ctx);
  }
}

const byInternalName = (a: RouteParent, b: RouteParent): number => {
  const x = a.parent.mesh ? 'mesh' : a.parent.internalName;
  const y = b.parent.mesh ? 'mesh' : b.parent.internalName;
  return x < y ? -1 : x > y ? 1 : 0;
};

const byNamespaceName = (
  a: { readonly meta: { readonly namespace: string; readonly name: string } },
  b: { readonly meta: { readonly namespace: string; readonly name: string } },
): number => {
  const x = `${a.meta.namespace}/${a.meta.name}`;
  const y = `${b.meta.namespace}/${b.meta.name}`;
  return x < y ? -1 : x > y ? 1 : 0;
};

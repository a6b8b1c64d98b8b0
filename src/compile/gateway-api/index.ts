/**
 * The Gateway API → Istio config conversion, run before the translators (as istiod's
 * pilot/pkg/config/kube/gateway does): Gateways of classes meshsnap owns become one Istio Gateway
 * per listener (listeners.ts), and HTTPRoutes, GRPCRoutes, TCPRoutes and TLSRoutes attached to
 * them — or to a Service, for the mesh (GAMMA) — become VirtualServices (virtual-services.ts).
 * Routers, listeners, TLS, explain and show then work on them unchanged. Every object meshsnap is
 * responsible for gets its status as an `info` diagnostic (code `gateway-api-status`), and a route
 * problem a warning naming the route's field. Pure.
 */
import type { Diagnostics } from '../../model/diagnostics.js';
import type { Gateway } from '../../model/gateway.js';
import {
  ISTIO_GATEWAY_CONTROLLER,
  OWN_CONTROLLERS,
  writtenKind,
  type GatewayApiObject,
  type GatewayApiRoute,
  type GRPCRoute,
  type HTTPRoute,
} from '../../model/gateway-api.js';
import type { InputSet } from '../../model/inputs.js';
import type { HTTPRoute as IstioHttpRoute, VirtualService } from '../../model/istio.js';
import type { Service } from '../../model/k8s.js';
import { STATUS_DIAGNOSTIC_CODE, type ObjectStatus, type StatusCondition } from '../../model/object-status.js';
import type { BackendContext } from './backends.js';
import { gatewayClassStatus, ownedClasses } from './classes.js';
import { gatewayStatus } from './gateway-status.js';
import { hostsOverlap, hostSubsetOf } from './hostnames.js';
import { convertGrpcRules, convertHttpRules, type Problem, type RuleConversion } from './http-rules.js';
import { convertL4Rules, type L4Conversion } from './l4-rules.js';
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

  const gateways: {
    gw: (typeof inputs.kubernetesGateways)[number];
    controller: string;
    listeners: ListenerResult[];
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
        kind: 'Gateway',
        namespace: gw.meta.namespace,
        name: gw.meta.name,
        field: 'spec.gatewayClassName',
        ...(gw.origin.file !== undefined ? { file: gw.origin.file } : {}),
        ...(gw.origin.index !== undefined ? { index: gw.origin.index } : {}),
      });
      continue;
    }
    const listeners = gw.spec.listeners.map((l) => convertListener(gw, l, inputs.namespaces, grants));
    const key = `${gw.meta.namespace}/${gw.meta.name}`;
    listenersOf.set(
      key,
      listeners.flatMap((l) => (l.parent ? [l.parent] : [])),
    );
    controllerOf.set(key, controller);
    for (const l of listeners) if (l.server) generated.push(l.server);
    gateways.push({ gw, controller, listeners });
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

  for (const { gw, listeners } of gateways) {
    const key = `${gw.meta.namespace}/${gw.meta.name}`;
    reportStatus(
      diags,
      gw,
      gatewayStatus(gw, listeners, (l) => attached.get(`${key}/${l}`)?.size ?? 0, inputs.services, suffix),
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

type Converted = RuleConversion | (L4Conversion & { readonly routes?: undefined });

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

function piecesFor(route: GatewayApiRoute, p: RouteParent, result: Converted, suffix: string): Piece[] {
  const hostnames = 'hostnames' in route.spec ? route.spec.hostnames : [];
  if (p.parent.mesh) {
    const svc = p.parent.service;
    const host = `${svc.meta.name}.${svc.meta.namespace}.svc.${suffix}`;
    const port = p.ref.port;
    const key = `${route.meta.namespace}${port !== undefined ? `/${port}` : ''}/${host}`;
    if (result.routes) {
      const http = port !== undefined ? withPort(result.routes, port) : result.routes;
      return http.length ? [{ key, route, gateway: 'mesh', host, http }] : [];
    }
    const l4Key = `${route.meta.name}~${route.kind === 'TCPRoute' ? 'tcp' : 'tls'}~${route.meta.namespace}/${key}`;
    return l4Piece(route, l4Key, 'mesh', host, result.rules, port, [host]);
  }
  const listenerHost = p.parent.listener.hostname;
  const hosts = (hostnames.length ? hostnames : ['*']).filter(
    (h) => (listenerHost === undefined || hostsOverlap(listenerHost, h)) && allowedByIsolation(p, h),
  );
  if (result.routes) {
    if (!result.routes.length) return [];
    return hosts.map((host) => ({
      key: `${p.parent.mesh ? '' : p.parent.internalName}/${host}`,
      route,
      gateway: p.parent.mesh ? 'mesh' : p.parent.internalName,
      host,
      http: result.routes,
    }));
  }
  const internal = p.parent.internalName;
  if (route.kind === 'TCPRoute')
    return l4Piece(route, `${route.meta.name}~tcp~${internal}`, internal, '*', result.rules, undefined, []);
  // TLSRoute: SNI names are the route's hostnames met with the listener's.
  const sni = hosts.map((h) => (listenerHost && hostSubsetOf(listenerHost, h) ? listenerHost : h));
  return sni.flatMap((h) =>
    l4Piece(route, `${route.meta.name}~tls~${internal}/${h}`, internal, h, result.rules, undefined, [h]),
  );
}

function l4Piece(
  route: GatewayApiRoute,
  key: string,
  gateway: string,
  host: string,
  rules: L4Conversion['rules'],
  port: number | undefined,
  sniHosts: readonly string[],
): Piece[] {
  if (!rules.length) return [];
  const match = port !== undefined ? [{ port }] : undefined;
  if (route.kind === 'TCPRoute')
    return [{ key, route, gateway, host, tcp: rules.map((r) => ({ ...(match ? { match } : {}), route: r })) }];
  const sni = sniHosts.length ? sniHosts : [host];
  return [
    {
      key,
      route,
      gateway,
      host,
      tls: rules.map((r) => ({ match: [{ sniHosts: sni, ...(port !== undefined ? { port } : {}) }], route: r })),
    },
  ];
}

/** istiod's augmentPortMatch: a Service parentRef with a port narrows every route to that port. */
function withPort(routes: readonly IstioHttpRoute[], port: number): IstioHttpRoute[] {
  return routes.map((r) => ({
    ...r,
    match: r.match?.length ? r.match.map((m) => ({ ...m, port })) : [{ port }],
  }));
}

/**
 * Listener isolation (istiod's hostnameAllowedByIsolation): a route host that a more specific
 * listener on the same port and protocol also serves belongs to that listener only.
 */
function allowedByIsolation(p: RouteParent, routeHost: string): boolean {
  if (p.parent.mesh) return true;
  const ours = p.parent.listener.hostname ?? '';
  if (ours !== '' && !ours.startsWith('*')) return true;
  if (ours !== '' && !hostsOverlap(routeHost, ours)) return false;
  for (const other of p.banned) {
    if (ours.length > other.length) continue;
    if (other !== '' && hostSubsetOf(routeHost, other)) return false;
  }
  return true;
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

function summary(status: ObjectStatus): string {
  const conds: readonly StatusCondition[] =
    'parents' in status ? status.parents.flatMap((p) => p.conditions) : status.conditions;
  const bad = conds.filter((c) => (c.type === 'Conflicted' ? c.status !== 'False' : c.status !== 'True'));
  if (!bad.length) return 'status: all conditions True';
  return `status: ${bad.map((c) => `${c.type}=${c.status} (${c.reason})`).join(', ')}`;
}

function reportStatus(diags: Diagnostics, o: GatewayApiObject, status: ObjectStatus): void {
  diags.info({
    code: STATUS_DIAGNOSTIC_CODE,
    message: summary(status),
    kind: writtenKind(o),
    ...(o.meta.namespace ? { namespace: o.meta.namespace } : {}),
    name: o.meta.name,
    ...(o.origin.file !== undefined ? { file: o.origin.file } : {}),
    ...(o.origin.index !== undefined ? { index: o.origin.index } : {}),
    status,
  });
}

function reportProblems(diags: Diagnostics, route: GatewayApiRoute, problems: readonly Problem[]): void {
  const seen = new Set<string>();
  for (const { field, error } of problems) {
    const k = `${field}|${error.reason}`;
    if (seen.has(k)) continue;
    seen.add(k);
    diags.warn({
      code: `gateway-api-${error.reason.replace(/[A-Z]/g, (c, i: number) => (i ? '-' : '') + c.toLowerCase())}`,
      message: `${error.reason}: ${error.message}`,
      kind: route.kind,
      namespace: route.meta.namespace,
      name: route.meta.name,
      field,
      ...(route.origin.file !== undefined ? { file: route.origin.file } : {}),
      ...(route.origin.index !== undefined ? { index: route.origin.index } : {}),
    });
  }
}

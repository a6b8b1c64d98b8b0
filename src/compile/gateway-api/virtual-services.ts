/**
 * Routes attached to a parent → VirtualServices (istiod's route collections + mergeHTTPRoutes).
 * One piece per (route, parent, hostname), keyed `<Istio Gateway>/<host>` for a listener and
 * `<route namespace>[/<port>]/<service FQDN>` for a Service (GAMMA). Pieces with one key merge into
 * one VirtualService named by the key (`/` → `~`), in the oldest route's namespace: the routes of
 * the oldest route first (then namespace/name), then sorted by the spec's precedence.
 */
import type { GatewayApiRoute } from '../../model/gateway-api.js';
import type { HTTPRoute, TCPRoute, TLSRoute, VirtualService } from '../../model/istio.js';
import { compareAge, sortByPrecedence } from './precedence.js';

export interface Piece {
  readonly key: string;
  readonly route: GatewayApiRoute;
  /** The Istio Gateway (`<ns>/<name>`) or `mesh`. */
  readonly gateway: string;
  readonly host: string;
  readonly http?: readonly HTTPRoute[];
  readonly tcp?: readonly TCPRoute[];
  readonly tls?: readonly TLSRoute[];
}

export function mergePieces(pieces: readonly Piece[]): VirtualService[] {
  const byKey = new Map<string, Piece[]>();
  for (const p of pieces) {
    const list = byKey.get(p.key);
    if (list) list.push(p);
    else byKey.set(p.key, [p]);
  }
  const out: VirtualService[] = [];
  for (const [key, list] of byKey) {
    const ordered = [...list].sort((a, b) => compareAge(a.route, b.route));
    const first = ordered[0] as Piece;
    const http = sortByPrecedence(ordered.flatMap((p) => p.http ?? []));
    const tcp = ordered.flatMap((p) => p.tcp ?? []);
    const tls = ordered.flatMap((p) => p.tls ?? []);
    out.push({
      kind: 'VirtualService',
      apiVersion: 'networking.istio.io/v1',
      meta: { name: key.replaceAll('/', '~'), namespace: first.route.meta.namespace, labels: {}, annotations: {} },
      ...(first.route.meta.creationTimestamp ? { creationTimestamp: first.route.meta.creationTimestamp } : {}),
      origin: first.route.origin,
      spec: {
        hosts: [first.host],
        gateways: [first.gateway],
        ...(http.length ? { http } : {}),
        ...(tcp.length ? { tcp } : {}),
        ...(tls.length ? { tls } : {}),
      },
      gatewaySemantics: true,
    });
  }
  return out.sort((a, b) => {
    const x = `${a.meta.namespace}/${a.meta.name}`;
    const y = `${b.meta.namespace}/${b.meta.name}`;
    return x < y ? -1 : x > y ? 1 : 0;
  });
}

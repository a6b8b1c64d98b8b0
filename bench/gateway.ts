/**
 * The gateway benchmark: the synthetic mesh plus one ingress gateway exposing every service (one
 * Gateway with hosts `*` on port 80, one VirtualService per service for `<svc>.<ns>.example.com`).
 * Prints, per size, the full compile time (documents → built snapshot) with and without the
 * gateway, and the size of the gateway's route config `http.8080` (encoded protobuf) and its
 * virtual host count. Writes bench-results/gateway.json.
 *
 *   node --expose-gc dist/bench/run.js --gateway [--sizes 1000]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { RawDocument } from '../src/inputs/parse.js';
import { compileDocuments } from '../src/pipeline.js';
import type { Hasher } from '../src/snapshot/digest.js';
import { nodeSha256Hex } from '../src/snapshot/store/local.js';
import { encodeMessage, type RouteConfiguration } from '../src/xds/proto.js';
import { TypeName } from '../src/xds/type-urls.js';
import { compile } from '../src/compile/index.js';
import { buildInputSet } from '../src/inputs/index.js';
import { generateMesh } from './synthetic.js';

// The hasher `meshsnap compile` and `meshsnap watch` use (node:crypto's one-shot hash).
const sha256: Hasher = nodeSha256Hex;
const ROUTE_NAME = 'http.8080';
const RUNS = 3;

export interface GatewayResult {
  readonly services: number;
  readonly compileMs: number;
  readonly compileWithoutGatewayMs: number;
  readonly routeConfigBytes: number;
  readonly virtualHosts: number;
  readonly routerClasses: number;
}

/** The ingress gateway Service and Pod, its Gateway, and a VirtualService per service. */
export function ingressDocuments(mesh: readonly RawDocument[]): RawDocument[] {
  const objects: Record<string, unknown>[] = [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'istio-ingressgateway', namespace: 'istio-system' },
      spec: {
        clusterIP: '10.95.0.1',
        selector: { istio: 'ingressgateway' },
        ports: [{ name: 'http2', port: 80, targetPort: 8080 }],
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'istio-ingressgateway-0', namespace: 'istio-system', labels: { istio: 'ingressgateway' } },
      spec: { containers: [{ name: 'istio-proxy', ports: [{ containerPort: 8080 }] }] },
      status: {
        phase: 'Running',
        podIP: '10.95.1.1',
        podIPs: [{ ip: '10.95.1.1' }],
        conditions: [{ type: 'Ready', status: 'True' }],
      },
    },
    {
      apiVersion: 'networking.istio.io/v1',
      kind: 'Gateway',
      metadata: { name: 'ingress', namespace: 'istio-system' },
      spec: {
        selector: { istio: 'ingressgateway' },
        servers: [{ port: { number: 80, name: 'http', protocol: 'HTTP' }, hosts: ['*'] }],
      },
    },
  ];
  for (const d of mesh) {
    const o = d.object as { kind?: string; metadata?: { name: string; namespace: string } };
    if (o.kind !== 'Service' || !o.metadata) continue;
    const { name, namespace } = o.metadata;
    objects.push({
      apiVersion: 'networking.istio.io/v1',
      kind: 'VirtualService',
      metadata: { name: `${name}-ingress`, namespace },
      spec: {
        hosts: [`${name}.${namespace}.example.com`],
        gateways: ['istio-system/ingress'],
        http: [{ route: [{ destination: { host: name, port: { number: 8080 } } }] }],
      },
    });
  }
  return objects.map((object, i) => ({ file: 'ingress.yaml', index: i, object }));
}

function fastest(run: () => void): number {
  let best = Infinity;
  for (let i = 0; i < RUNS; i++) {
    globalThis.gc?.();
    const t = performance.now();
    run();
    best = Math.min(best, performance.now() - t);
  }
  return best;
}

export function measureGateway(services: number): GatewayResult {
  const mesh = generateMesh({ services }).docs;
  const docs = [...mesh, ...ingressDocuments(mesh)];
  const compileMs = fastest(() => compileDocuments(docs, { hasher: sha256 }));
  const compileWithoutGatewayMs = fastest(() => compileDocuments(mesh, { hasher: sha256 }));
  const { output } = compile(buildInputSet(docs));
  const routers = output.classes.filter((c) => c.generator === 'router');
  const group = routers[0]?.groups.find((g) => g.startsWith('gateway/'));
  const rc = group ? (output.groups.get(group)?.routes.get(ROUTE_NAME) as RouteConfiguration | undefined) : undefined;
  if (!rc) throw new Error(`no route config ${ROUTE_NAME} for the ingress gateway`);
  return {
    services,
    compileMs,
    compileWithoutGatewayMs,
    routeConfigBytes: encodeMessage(TypeName.RouteConfiguration, rc).length,
    virtualHosts: rc.virtual_hosts?.length ?? 0,
    routerClasses: routers.length,
  };
}

export function runGatewayBench(sizes: readonly number[]): void {
  const results: GatewayResult[] = [];
  for (const n of sizes) {
    process.stderr.write(`bench gateway: ${n} services…\n`);
    const r = measureGateway(n);
    results.push(r);
    process.stdout.write(
      `gateway ${n} services: full compile ${r.compileMs.toFixed(0)} ms (without the gateway ${r.compileWithoutGatewayMs.toFixed(0)} ms); ` +
        `${ROUTE_NAME}: ${r.virtualHosts} virtual hosts, ${(r.routeConfigBytes / 1024).toFixed(1)} KiB\n`,
    );
  }
  const dir = join(process.cwd(), 'bench-results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'gateway.json');
  writeFileSync(file, JSON.stringify({ node: process.version, results }, null, 2) + '\n');
  process.stderr.write(`bench gateway: wrote ${file}\n`);
}

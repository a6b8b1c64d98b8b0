/**
 * `meshsnap demo [--store DIR] [--channel NAME]`: the quick start's main job. Compiles the bundled
 * example mesh (examples/bookstore) into the local store, then summarizes what the sidecar of the
 * `web` pod would be served: listeners, routes with their weights, clusters and endpoints.
 */
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCommand } from '../args.js';
import { note, printText } from '../output.js';
import { checkChannel, openStore, resolveVersion } from '../store.js';
import { compileCommand } from './compile.js';
import { servedConfig } from './show.js';
import { XDS_TYPES } from '../../xds/type-urls.js';
import { demoSpec } from '../specs/demo.js';

const EXAMPLE = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..', 'examples', 'bookstore');
const NODE = {
  id: 'sidecar~10.244.1.10~web-v1-6c9f7d8b5-k2x7p.shop~shop.svc.cluster.local',
  metadata: {
    NAMESPACE: 'shop',
    LABELS: { app: 'web', version: 'v1', 'security.istio.io/tlsMode': 'istio' },
    INSTANCE_IPS: '10.244.1.10',
    // Its Kubernetes Node, as istio-agent announces it: the proxy's zone, whose endpoints come first.
    NODE_NAME: 'node-a',
  },
};

type J = Record<string, unknown>;
const arr = (v: unknown): J[] => (Array.isArray(v) ? (v as J[]) : []);
const obj = (v: unknown): J => (v && typeof v === 'object' ? (v as J) : {});

export async function demoCommand(argv: readonly string[]): Promise<number> {
  const { values } = parseCommand(demoSpec, argv);
  const channel = checkChannel(values.channel);
  const storeArgs = [...(values.store !== undefined ? ['--store', values.store] : []), '--channel', channel];
  const rel = relative(process.cwd(), EXAMPLE) || '.';
  note(`$ meshsnap compile ${rel} ${storeArgs.join(' ')}`);
  const code = await compileCommand([EXAMPLE, ...storeArgs, '--quiet']);
  if (code !== 0) return code;

  const store = openStore(values.store);
  const record = await resolveVersion(store, channel, 'latest');
  const { classId, dump } = await servedConfig(store, record.digest, String(record.version), NODE, XDS_TYPES);
  const out: string[] = [];
  out.push(
    '',
    `What the sidecar of pod web-v1-6c9f7d8b5-k2x7p (namespace shop) is served — version ${record.version}, class ${classId}:`,
  );
  for (const section of dump.configs as J[]) {
    const type = String(section['@type']);
    if (type.endsWith('ListenersConfigDump')) {
      const names = arr(section.dynamic_listeners).map((l) => String(l.name));
      out.push('', `Listeners (${names.length}): ${names.join(', ')}`);
    } else if (type.endsWith('RoutesConfigDump')) {
      out.push('', 'Routes:');
      for (const rc of arr(section.dynamic_route_configs).map((r) => obj(r.route_config))) {
        for (const vh of arr(rc.virtual_hosts)) {
          if (vh.name === 'allow_any' || vh.name === 'block_all') continue;
          out.push(`  route config "${String(rc.name)}", virtual host ${String(vh.name)}`);
          for (const r of arr(vh.routes)) out.push(`    ${describeRoute(r)}`);
        }
      }
    } else if (type.endsWith('ClustersConfigDump')) {
      const names = arr(section.dynamic_active_clusters).map((c) => String(obj(c.cluster).name));
      out.push('', `Clusters (${names.length}):`, ...names.map((n) => `  ${n}`));
    } else if (type.endsWith('EndpointsConfigDump')) {
      const sets = arr(section.dynamic_endpoint_configs).map((e) => obj(e.endpoint_config));
      out.push('', `Endpoints (${sets.length}):`);
      for (const cla of sets) {
        const localities = arr(cla.endpoints).map((l) => {
          const where = String(obj(l.locality).zone ?? '') || 'no zone';
          const priority = Number(l.priority ?? 0) > 0 ? `, priority ${String(l.priority)}` : '';
          return `${arr(l.lb_endpoints)
            .map((e) => socket(e))
            .join(', ')} (${where}${priority})`;
        });
        out.push(`  ${String(cla.cluster_name)}: ${localities.join('; ') || '(none)'}`);
      }
    }
  }
  out.push(
    '',
    'Full config_dump JSON for this proxy:',
    `  node bin/meshsnap.js show latest --node '${NODE.id}' --metadata '${JSON.stringify(NODE.metadata)}' ${storeArgs.join(' ')}`,
  );
  printText(out.join('\n'));
  return 0;
}

function socket(e: J): string {
  const addr = obj(obj(obj(e.endpoint).address).socket_address);
  return `${String(addr.address)}:${String(addr.port_value)}`;
}

function describeRoute(r: J): string {
  const match = obj(r.match);
  const cond = ['prefix', 'path', 'safe_regex']
    .filter((k) => k in match)
    .map((k) => `${k} ${JSON.stringify(k === 'safe_regex' ? obj(match[k]).regex : match[k])}`);
  for (const h of arr(match.headers)) cond.push(`header ${String(h.name)}`);
  const action = obj(r.route);
  let target = '';
  if (typeof action.cluster === 'string') target = action.cluster;
  else if (action.weighted_clusters)
    target = arr(obj(action.weighted_clusters).clusters)
      .map((c) => `${String(c.name)} ${String(c.weight)}%`)
      .join(' + ');
  else if (r.redirect) target = 'redirect';
  else if (r.direct_response) target = `direct response ${String(obj(r.direct_response).status)}`;
  const extras: string[] = [];
  if (action.timeout && action.timeout !== '0s') extras.push(`timeout ${String(action.timeout)}`);
  const retry = obj(action.retry_policy);
  if (retry.num_retries !== undefined) extras.push(`retries ${String(retry.num_retries)}`);
  if (obj(r.typed_per_filter_config)['envoy.filters.http.fault']) extras.push('fault injection');
  return `${String(r.name ?? '')} [${cond.join(', ') || 'any'}] → ${target}${extras.length ? ` (${extras.join(', ')})` : ''}`;
}

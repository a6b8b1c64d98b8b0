/**
 * A seeded source of random config churn for the incremental compiler tests: VirtualServices,
 * DestinationRules and Services put (new, edited: hosts added and removed, weights, subsets,
 * exportTo, ports, some naming no protocol) and deleted, one object per step, each read from YAML as
 * the inputs layer reads it.
 */
import assert from 'node:assert/strict';
import { withDeleted, withReplaced, type InputKind, type InputObjects } from '../../src/compile/incremental.js';
import { buildInputSet, parseDocuments } from '../../src/inputs/index.js';
import type { InputSet } from '../../src/model/inputs.js';
import { pick, type Rand } from '../inputs/prng.js';
import type { Step } from './incremental-helpers.js';

const hostOf = (s: { meta: { name: string; namespace: string } }): string =>
  `${s.meta.name}.${s.meta.namespace}.svc.cluster.local`;

/** The one object of `kind` a YAML document reads as (no error diagnostics). */
function read<K extends 'VirtualService' | 'DestinationRule' | 'Service'>(kind: K, yaml: string): InputObjects[K] {
  const set = buildInputSet(parseDocuments(yaml, 'change.yaml').docs);
  assert.deepEqual(
    set.diagnostics.filter((d) => d.severity === 'error'),
    [],
    yaml,
  );
  const list = { VirtualService: set.virtualServices, DestinationRule: set.destinationRules, Service: set.services }[
    kind
  ] as readonly InputObjects[K][];
  assert.equal(list.length, 1, yaml);
  return list[0]!;
}

function put<K extends InputKind>(inputs: InputSet, kind: K, object: InputObjects[K], label: string): Step {
  const { namespace, name } = object.meta;
  return { next: withReplaced(inputs, kind, object), changed: [{ kind, namespace, name }], label };
}

function remove(inputs: InputSet, kind: InputKind, namespace: string, name: string, label: string): Step {
  return { next: withDeleted(inputs, kind, namespace, name), changed: [{ kind, namespace, name }], label };
}

const exportTo = (rand: Rand, namespaces: readonly string[]): string => {
  const r = rand();
  if (r < 0.5) return '';
  if (r < 0.7) return '  exportTo: ["."]\n';
  if (r < 0.85) return '  exportTo: ["*"]\n';
  return `  exportTo: [${pick(rand, namespaces)}]\n`;
};

/** One random config change of `inputs` (the `n`th: names cycle so that objects are edited and deleted again). */
export function randomConfigStep(inputs: InputSet, rand: Rand, n: number): Step {
  const services = inputs.services.filter((s) => s.type !== 'ExternalName');
  const namespaces = [...new Set(services.map((s) => s.meta.namespace))];
  const apps = [...new Set(inputs.pods.map((p) => p.meta.labels['app']).filter((a) => a !== undefined))];
  const r = rand();
  const k = Math.floor(rand() * 3);

  if (r < 0.3) {
    const home = pick(rand, services);
    const ns = home.meta.namespace;
    const hosts = [hostOf(home), ...(rand() < 0.4 ? [hostOf(pick(rand, services))] : [])];
    const to = pick(rand, services);
    const w = 1 + Math.floor(rand() * 99);
    const subset = (): string => (rand() < 0.3 ? `, subset: ${pick(rand, ['v1', 'v2'])}` : '');
    const yaml = `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: vs-${k}, namespace: ${ns}}
spec:
  hosts: [${[...new Set(hosts)].join(', ')}]
${exportTo(rand, namespaces)}  http:
  - ${rand() < 0.5 ? 'match: [{uri: {prefix: /api}}]\n    ' : ''}route:
    - {destination: {host: ${hosts[0]}${subset()}}, weight: ${w}}
    - {destination: {host: ${hostOf(to)}${subset()}}, weight: ${100 - w}}
${rand() < 0.4 ? `    timeout: ${1 + Math.floor(rand() * 9)}s\n` : ''}`;
    return put(inputs, 'VirtualService', read('VirtualService', yaml), `vs ${ns}/vs-${k}`);
  }
  if (r < 0.4) {
    const vs = inputs.virtualServices.length > 0 ? pick(rand, inputs.virtualServices) : undefined;
    if (vs) return remove(inputs, 'VirtualService', vs.meta.namespace, vs.meta.name, `delete vs ${vs.meta.name}`);
  }
  if (r < 0.65) {
    const target = pick(rand, services);
    const ns = rand() < 0.7 ? target.meta.namespace : pick(rand, namespaces);
    const subsets = ['v1', 'v2', 'v3'].filter(() => rand() < 0.6);
    const policy = pick(rand, [
      '',
      '  trafficPolicy: {loadBalancer: {simple: LEAST_REQUEST}}\n',
      '  trafficPolicy: {connectionPool: {tcp: {maxConnections: 7}}}\n',
      '  trafficPolicy: {tls: {mode: ISTIO_MUTUAL}}\n',
      '  trafficPolicy: {outlierDetection: {consecutive5xxErrors: 3}}\n',
    ]);
    const yaml = `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: dr-${k}, namespace: ${ns}}
spec:
  host: ${hostOf(target)}
${exportTo(rand, namespaces)}${policy}${
      subsets.length > 0
        ? `  subsets:\n${subsets.map((s) => `  - {name: ${s}, labels: {version: ${s}}}\n`).join('')}`
        : ''
    }`;
    return put(inputs, 'DestinationRule', read('DestinationRule', yaml), `dr ${ns}/dr-${k} → ${hostOf(target)}`);
  }
  if (r < 0.75) {
    const dr = inputs.destinationRules.length > 0 ? pick(rand, inputs.destinationRules) : undefined;
    if (dr) return remove(inputs, 'DestinationRule', dr.meta.namespace, dr.meta.name, `delete dr ${dr.meta.name}`);
  }
  if (r < 0.93 || services.length < 3) {
    // A new service (or an edit of one added earlier): its selector, ports and cluster IP.
    const ns = pick(rand, namespaces);
    const ports = [
      '  - {name: http, port: 80, targetPort: 8080}\n',
      ...(rand() < 0.5 ? ['  - {name: grpc-api, port: 81, targetPort: 9090}\n'] : []),
      ...(rand() < 0.2 ? ['  - {name: tcp-db, port: 5432}\n'] : []),
      // A port naming no protocol: sniffed, its <host>:<port> route config follows the host's routes.
      ...(rand() < 0.4 ? ['  - {port: 82, targetPort: 8082}\n'] : []),
    ];
    const selector = rand() < 0.8 && apps.length > 0 ? `  selector: {app: ${pick(rand, apps)}}\n` : '';
    const yaml = `apiVersion: v1
kind: Service
metadata: {name: extra-${k}, namespace: ${ns}}
spec:
  clusterIP: 10.97.${n % 200}.${1 + k}
${selector}  ports:
${ports.join('')}`;
    return put(inputs, 'Service', read('Service', yaml), `service ${ns}/extra-${k}`);
  }
  const gone = pick(rand, services);
  return remove(inputs, 'Service', gone.meta.namespace, gone.meta.name, `delete service ${gone.meta.name}`);
}

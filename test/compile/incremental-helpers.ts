/**
 * Helpers for the incremental compiler tests: byte-level output comparison, and a seeded source
 * of random endpoint churn (IP changes, endpoints added/removed, readiness, slices added/deleted,
 * port renumbering, pod moves, legacy Endpoints edits, and now and then a pod relabel that must
 * take the full path).
 */
import assert from 'node:assert/strict';
import type { ChangedObject } from '../../src/compile/incremental.js';
import { applyCompileDelta, IncrementalCompiler, withDeleted, withReplaced } from '../../src/compile/incremental.js';
import { compile } from '../../src/compile/index.js';
import type { CompileOutput } from '../../src/compile/types.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildInputSet, parseDocuments } from '../../src/inputs/index.js';
import type { InputSet } from '../../src/model/inputs.js';
import { BOOKINFO_STATE, ISTIO_SAMPLES } from '../helpers/paths.js';
import type { EndpointSlice, Endpoints, Pod, SliceEndpoint } from '../../src/model/k8s.js';
import { encodeMessage } from '../../src/xds/proto.js';
import { XDS_TYPE_NAME, XDS_TYPES } from '../../src/xds/type-urls.js';
import { mulberry32, pick, type Rand } from '../inputs/prng.js';

/** Same groups, same names in the same order, same encoded bytes per resource, same classes and selectors. */
export function assertSameOutput(actual: CompileOutput, expected: CompileOutput, what: string): void {
  assert.deepEqual([...actual.groups.keys()], [...expected.groups.keys()], `${what}: group ids`);
  for (const [id, want] of expected.groups) {
    const got = actual.groups.get(id)!;
    for (const type of XDS_TYPES) {
      assert.deepEqual([...got[type].keys()], [...want[type].keys()], `${what}: ${id} ${type} names`);
      for (const [name, msg] of want[type]) {
        const a = Buffer.from(encodeMessage(XDS_TYPE_NAME[type], got[type].get(name)!));
        const b = Buffer.from(encodeMessage(XDS_TYPE_NAME[type], msg));
        assert.ok(a.equals(b), `${what}: ${id} ${type} ${name} differs`);
      }
    }
  }
  assert.deepEqual(actual.classes, expected.classes, `${what}: classes`);
  assert.deepEqual(actual.selectors, expected.selectors, `${what}: selectors`);
}

/**
 * `steps` random endpoint changes (randomStep, seeded) through one IncrementalCompiler: each must
 * stay a delta (but a pod relabel) and give the output a full compile gives. `first` checks the full
 * compile's output before the churn starts.
 */
export function assertChurnMatchesFull(
  start: InputSet,
  seed: number,
  steps: number,
  first: (output: CompileOutput) => void,
): void {
  let inputs = start;
  const ic = new IncrementalCompiler();
  let output = ic.compileFull(inputs).output;
  first(output);
  const rand = mulberry32(seed);
  for (let i = 0; i < steps; i++) {
    const step = randomStep(inputs, rand, i);
    inputs = step.next;
    const r = ic.update(inputs, step.changed);
    output = r.kind === 'delta' ? applyCompileDelta(output, r.delta) : r.output;
    if (!step.label.includes('relabel')) assert.equal(r.kind, 'delta', step.label);
    assertSameOutput(output, compile(inputs).output, `step ${i} (${step.label})`);
  }
}

export interface Step {
  readonly next: InputSet;
  readonly changed: ChangedObject[];
  readonly label: string;
}

const META = { labels: {}, annotations: {} };

/** One random change of the endpoint layer (sometimes a pod relabel) applied with withReplaced/withDeleted. */
export function randomStep(inputs: InputSet, rand: Rand, n: number): Step {
  const slices = inputs.endpointSlices;
  const pods = inputs.pods.filter((p) => p.ips.length > 0);
  const ip = (): string =>
    `10.${200 + Math.floor(rand() * 2)}.${Math.floor(rand() * 4)}.${1 + Math.floor(rand() * 20)}`;
  const someIp = (): string => (rand() < 0.4 && pods.length > 0 ? (pick(rand, pods).ips[0] as string) : ip());
  const ref = (ns: string) => {
    const inNs = pods.filter((p) => p.meta.namespace === ns);
    return rand() < 0.7 && inNs.length > 0
      ? { targetRef: { kind: 'Pod', namespace: ns, name: pick(rand, inNs).meta.name } }
      : {};
  };
  const endpoint = (ns: string): SliceEndpoint => ({
    addresses: [someIp()],
    ready: rand() < 0.8,
    serving: rand() < 0.9,
    terminating: rand() < 0.3,
    ...ref(ns),
    ...(rand() < 0.5 ? { zone: pick(rand, ['zone-a', 'zone-b']) } : {}),
  });
  const putSlice = (s: EndpointSlice, label: string): Step => ({
    next: withReplaced(inputs, 'EndpointSlice', s),
    changed: [{ kind: 'EndpointSlice', namespace: s.meta.namespace, name: s.meta.name }],
    label,
  });
  const editEndpoints = (s: EndpointSlice, f: (eps: SliceEndpoint[]) => void, label: string): Step => {
    const endpoints = [...s.endpoints];
    f(endpoints);
    return putSlice({ ...s, endpoints }, label);
  };

  const r = rand();
  if (slices.length > 0 && r < 0.6) {
    const s = pick(rand, slices);
    const ns = s.meta.namespace;
    const which = Math.floor(rand() * 7);
    const i = Math.floor(rand() * s.endpoints.length);
    const at = s.endpoints[i];
    if (which === 0 && at)
      return editEndpoints(s, (e) => void (e[i] = { ...at, addresses: [someIp()] }), `ip ${s.meta.name}`);
    if (which === 1 && at)
      return editEndpoints(
        s,
        (e) => void (e[i] = { ...at, ready: !at.ready, serving: rand() < 0.5, terminating: rand() < 0.5 }),
        `ready ${s.meta.name}`,
      );
    if (which === 2 && at) return editEndpoints(s, (e) => void e.splice(i, 1), `remove ${s.meta.name}`);
    if (which === 3 && at?.targetRef)
      return editEndpoints(
        s,
        (e) =>
          void (e[i] = { addresses: at.addresses, ready: at.ready, serving: at.serving, terminating: at.terminating }),
        `unref ${s.meta.name}`,
      );
    if (which === 4 && s.ports.length > 0) {
      const ports = s.ports.map((p) => (rand() < 0.5 ? { ...p, port: 8000 + Math.floor(rand() * 3) } : p));
      return putSlice({ ...s, ports }, `ports ${s.meta.name}`);
    }
    if (which === 5)
      return {
        next: withDeleted(inputs, 'EndpointSlice', ns, s.meta.name),
        changed: [{ kind: 'EndpointSlice', namespace: ns, name: s.meta.name }],
        label: `delete ${s.meta.name}`,
      };
    return editEndpoints(s, (e) => void e.push(endpoint(ns)), `add ${s.meta.name}`);
  }
  if (slices.length > 0 && r < 0.72) {
    // A new slice for a service that has one: same service and ports, a few endpoints.
    const like = pick(rand, slices);
    const ns = like.meta.namespace;
    const endpoints = Array.from({ length: 1 + Math.floor(rand() * 3) }, () => endpoint(ns));
    const s: EndpointSlice = { ...like, meta: { ...like.meta, name: `${like.serviceName}-x${n}` }, endpoints };
    return putSlice(s, `new slice ${s.meta.name}`);
  }
  if (pods.length > 0 && r < 0.9) {
    const p = pick(rand, pods);
    const moved: Pod =
      rand() < 0.7 ? { ...p, ips: [someIp()] } : { ...p, nodeName: pick(rand, ['node-1', 'node-2', 'nowhere']) };
    return {
      next: withReplaced(inputs, 'Pod', moved),
      changed: [{ kind: 'Pod', namespace: p.meta.namespace, name: p.meta.name }],
      label: `pod ${p.meta.name}`,
    };
  }
  if (inputs.endpoints.length > 0 && r < 0.97) {
    const e = pick(rand, inputs.endpoints);
    const [first, ...rest] = e.subsets;
    const moved: Endpoints = first
      ? {
          ...e,
          subsets: [
            {
              ...first,
              addresses: first.addresses.length > 0 && rand() < 0.5 ? [] : [{ ip: someIp() }],
              notReadyAddresses: rand() < 0.5 ? [{ ip: ip() }] : [],
            },
            ...rest,
          ],
        }
      : {
          ...e,
          subsets: [{ addresses: [{ ip: someIp() }], notReadyAddresses: [], ports: [{ port: 5432, protocol: 'TCP' }] }],
        };
    return {
      next: withReplaced(inputs, 'Endpoints', moved),
      changed: [{ kind: 'Endpoints', namespace: e.meta.namespace, name: e.meta.name }],
      label: `endpoints ${e.meta.name}`,
    };
  }
  if (pods.length > 0) {
    const p = pick(rand, pods);
    const relabelled: Pod = {
      ...p,
      meta: { ...p.meta, labels: { ...p.meta.labels, version: pick(rand, ['v1', 'v2', 'v9']) } },
    };
    return {
      next: withReplaced(inputs, 'Pod', relabelled),
      changed: [{ kind: 'Pod', namespace: p.meta.namespace, name: p.meta.name }],
      label: `relabel ${p.meta.name}`,
    };
  }
  return { next: inputs, changed: [], label: 'nothing' };
}

/** A legacy Endpoints object for a service (tests add one beside the slices). */
export function legacyEndpoints(namespace: string, name: string, ips: readonly string[]): Endpoints {
  return {
    kind: 'Endpoints',
    meta: { name, namespace, ...META },
    origin: {},
    subsets: [
      {
        addresses: ips.map((ip) => ({ ip })),
        notReadyAddresses: [],
        ports: [{ name: 'tcp-db', port: 5432, protocol: 'TCP' }],
      },
    ],
  };
}

/** A headless Service `name` in front of the db pod (10.244.0.12) on 5432, with its legacy Endpoints. */
const headlessOnDbPod = (name: string): string => `apiVersion: v1
kind: Service
metadata: {name: ${name}, namespace: default}
spec:
  clusterIP: None
  selector: {app: db}
  ports: [{name: tcp-db, port: 5432, targetPort: 5432}]
---
apiVersion: v1
kind: Endpoints
metadata: {name: ${name}, namespace: default}
subsets:
- addresses: [{ip: 10.244.0.12}]
  ports: [{name: tcp-db, port: 5432}]
`;

/** Two headless services in front of the same pod and port: their pod-IP listeners conflict (the conflict names the IP). */
export const TWO_HEADLESS_ON_ONE_POD = `${headlessOnDbPod('db')}---\n${headlessOnDbPod('db-replica')}`;

/**
 * An EndpointSlice of Service `service` in `namespace`: one ready endpoint per address, each on
 * `port` (`name` empty for a Service port without a name).
 */
export function endpointSliceYaml(
  slice: string,
  service: string,
  port: { readonly name?: string; readonly port: number },
  addresses: readonly string[],
  namespace = 'default',
): string {
  const name = port.name !== undefined ? `name: ${port.name}, ` : '';
  return `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: ${slice}, namespace: ${namespace}, labels: {kubernetes.io/service-name: ${service}}}
addressType: IPv4
ports: [{${name}port: ${port.port}, protocol: TCP}]
endpoints:
${addresses.map((a) => `- addresses: [${a}]\n  conditions: {ready: true}\n`).join('')}`;
}

/** The bookinfo cluster state with the samples' DestinationRules and 80/20 reviews VirtualService, plus `extra` texts. */
export function bookinfoInputs(extra: readonly (readonly [file: string, text: string])[] = []): InputSet {
  const sample = (name: string) => readFileSync(join(ISTIO_SAMPLES, 'bookinfo', 'networking', name), 'utf8');
  const texts: (readonly [string, string])[] = [
    [BOOKINFO_STATE, readFileSync(BOOKINFO_STATE, 'utf8')],
    ['dr.yaml', sample('destination-rule-all.yaml')],
    ['vs.yaml', sample('virtual-service-reviews-80-20.yaml')],
    ...extra,
  ];
  return buildInputSet(texts.flatMap(([file, text]) => parseDocuments(text, file).docs));
}

/** What nodeChurn changes: one Service's EndpointSlice and its pods, in namespace `shop`. */
export interface NodeChurn {
  /** The EndpointSlice whose endpoints are added and removed. */
  readonly slice: string;
  /** Pods a new endpoint may point at (undefined: none). */
  readonly targets: readonly (string | undefined)[];
  /** The prefix of the pods that get new IPs or move between nodes. */
  readonly pods: string;
  /** Nodes pods move to (one without a Node object makes a full compile). */
  readonly nodes: readonly string[];
  readonly seed: number;
}

/**
 * Sixty random changes of a node-dependent Service (endpoints added or removed, with or without a
 * pod; pods getting new IPs or moving between nodes), each compiled incrementally and compared with
 * a full compile of the same inputs. Returns how many were deltas (patched in place).
 */
export function nodeChurnDeltas(text: string, churn: NodeChurn): number {
  let inputs = buildInputSet(parseDocuments(text, 'mesh.yaml').docs);
  assert.deepEqual(inputs.diagnostics, []);
  const ic = new IncrementalCompiler();
  let output = ic.compileFull(inputs).output;
  const rand = mulberry32(churn.seed);
  let deltas = 0;
  for (let i = 0; i < 60; i++) {
    let changed: ChangedObject;
    if (rand() < 0.5) {
      const s = inputs.endpointSlices.find((x) => x.meta.name === churn.slice) as EndpointSlice;
      const podName = pick(rand, [...churn.targets]);
      const endpoints = [...s.endpoints];
      if (rand() < 0.5 && endpoints.length > 1) endpoints.splice(Math.floor(rand() * endpoints.length), 1);
      else
        endpoints.push({
          addresses: [`10.0.3.${1 + Math.floor(rand() * 30)}`],
          ready: rand() < 0.8,
          serving: true,
          terminating: false,
          ...(podName ? { targetRef: { kind: 'Pod', namespace: 'shop', name: podName } } : {}),
        });
      inputs = withReplaced(inputs, 'EndpointSlice', { ...s, endpoints });
      changed = { kind: 'EndpointSlice', namespace: 'shop', name: churn.slice };
    } else {
      const p = pick(
        rand,
        inputs.pods.filter((x) => x.meta.name.startsWith(churn.pods)),
      ) as Pod;
      const moved: Pod =
        rand() < 0.3
          ? { ...p, ips: [`10.0.4.${Math.floor(rand() * 9)}`] }
          : { ...p, nodeName: pick(rand, [...churn.nodes]) };
      inputs = withReplaced(inputs, 'Pod', moved);
      changed = { kind: 'Pod', namespace: 'shop', name: p.meta.name };
    }
    const res = ic.update(inputs, [changed]);
    if (res.kind === 'delta') deltas++;
    output = res.kind === 'delta' ? applyCompileDelta(output, res.delta, res.layout) : res.output;
    assertSameOutput(output, compile(inputs).output, `step ${i}`);
  }
  return deltas;
}

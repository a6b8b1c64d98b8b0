/**
 * The "one endpoint moved" path, done incrementally with what src/ exposes today:
 *
 *   validate the changed EndpointSlice alone → rebuild that service's model endpoints from a
 *   one-service InputSet → `buildServiceEndpoints` for that service → re-digest the inputs →
 *   `SnapshotBuilder.applyDelta` with its ClusterLoadAssignments as upserts (encodes only them,
 *   checks consistency around them, rewrites one leaf path of the snapshot tree). measure.ts then
 *   publishes the result to a LocalStore ("reaches the store").
 *
 * The result must be the very snapshot a full recompile gives (checked by the bench and its test).
 */
import { performance } from 'node:perf_hooks';
import { compileContext, createContext } from '../src/compile/index.js';
import type { CompileContext } from '../src/compile/context.js';
import { buildServiceEndpoints } from '../src/compile/endpoints.js';
import type { CompileOutput } from '../src/compile/types.js';
import { Diagnostics } from '../src/inputs/diagnostics.js';
import { buildInputSet } from '../src/inputs/index.js';
import type { RawDocument } from '../src/inputs/parse.js';
import { buildServiceModel } from '../src/model/build.js';
import { inputsDigest } from '../src/model/canonical-inputs.js';
import type { InputSet } from '../src/model/inputs.js';
import type { EndpointSlice, Pod, Service } from '../src/model/k8s.js';
import { SnapshotBuilder, type BuiltSnapshot } from '../src/snapshot/build.js';
import type { Hasher } from '../src/snapshot/digest.js';
import { ResourceEncoder } from '../src/snapshot/encoder.js';

export const BENCH_COMPILER = { name: 'meshsnap-bench', version: '0' } as const;

/** What a long-running compiler would keep between changes. */
export interface CompiledState {
  readonly inputs: InputSet;
  readonly ctx: CompileContext;
  /** The builder's live output: it changes with the builder's next delta. */
  readonly output: CompileOutput;
  readonly encoder: ResourceEncoder;
  /** Holds the last snapshot's tree; applyEndpointSlice moves it forward. */
  readonly builder: SnapshotBuilder;
  readonly snapshot: BuiltSnapshot;
  readonly servicesByKey: ReadonlyMap<string, Service>;
  readonly podsByNamespace: ReadonlyMap<string, readonly Pod[]>;
}

export interface Stages {
  [stage: string]: number;
}

const key = (namespace: string, name: string): string => `${namespace}/${name}`;

export function compileState(docs: readonly RawDocument[], hasher: Hasher): { state: CompiledState; stages: Stages } {
  const t0 = performance.now();
  const inputs = buildInputSet(docs);
  const t1 = performance.now();
  const diags = new Diagnostics();
  for (const d of inputs.diagnostics) diags.add(d);
  const ctx = createContext(inputs, diags);
  const output = compileContext(ctx);
  const t2 = performance.now();
  const digest = inputsDigest(inputs, hasher);
  const t3 = performance.now();
  const encoder = new ResourceEncoder(hasher);
  const builder = new SnapshotBuilder({ inputsDigest: digest, compiler: BENCH_COMPILER }, { encoder });
  const snapshot = builder.build(output);
  const t4 = performance.now();
  const podsByNamespace = new Map<string, Pod[]>();
  for (const p of inputs.pods) {
    const list = podsByNamespace.get(p.meta.namespace);
    if (list) list.push(p);
    else podsByNamespace.set(p.meta.namespace, [p]);
  }
  const servicesByKey = new Map(inputs.services.map((s) => [key(s.meta.namespace, s.meta.name), s]));
  return {
    state: { inputs, ctx, output, encoder, builder, snapshot, servicesByKey, podsByNamespace },
    stages: { inputs: t1 - t0, compile: t2 - t1, inputsDigest: t3 - t2, snapshot: t4 - t3 },
  };
}

/** Applies one changed EndpointSlice document. Throws if the document is not a valid slice of a known service (bench inputs only). */
export function applyEndpointSlice(state: CompiledState, doc: RawDocument): { state: CompiledState; stages: Stages } {
  const t0 = performance.now();
  const slice: EndpointSlice | undefined = buildInputSet([doc]).endpointSlices[0];
  if (!slice) throw new Error('not a valid EndpointSlice');
  const { namespace, name } = slice.meta;
  const service = state.servicesByKey.get(key(namespace, slice.serviceName));
  if (!service) throw new Error(`no service ${namespace}/${slice.serviceName}`);
  const endpointSlices = state.inputs.endpointSlices.map((s) => (s.meta.namespace === namespace && s.meta.name === name ? slice : s));
  const inputs: InputSet = { ...state.inputs, endpointSlices };
  const t1 = performance.now();

  // The service's endpoints from a one-service InputSet: its slices, its namespace's pods, all nodes.
  const oneService: InputSet = {
    ...inputs,
    services: [service],
    endpointSlices: endpointSlices.filter((s) => s.meta.namespace === namespace && s.serviceName === slice.serviceName),
    endpoints: [],
    pods: state.podsByNamespace.get(namespace) ?? [],
    virtualServices: [],
    destinationRules: [],
    diagnostics: [],
  };
  const mini = buildServiceModel(oneService, new Diagnostics());
  const meshService = mini.services[0];
  if (!meshService) throw new Error('service vanished');
  const modelEndpoints = new Map(state.ctx.model.endpoints);
  modelEndpoints.set(meshService.hostname, mini.endpoints.get(meshService.hostname) ?? new Map());
  const ctx: CompileContext = { ...state.ctx, model: { ...state.ctx.model, endpoints: modelEndpoints } };
  const t2 = performance.now();

  const clas = buildServiceEndpoints(ctx, meshService);
  const t3 = performance.now();

  const digest = inputsDigest(inputs, state.encoder.hasher);
  const t4 = performance.now();
  const encodesBefore = state.encoder.encodes;
  if (state.builder.snapshot !== state.snapshot) throw new Error('applyEndpointSlice: the builder has moved past this state');
  const snapshot = state.builder.applyDelta({ endpoints: { endpoints: { upserts: clas } } }, { inputsDigest: digest });
  const t5 = performance.now();
  return {
    state: { ...state, inputs, ctx, output: state.builder.output(), snapshot },
    stages: {
      validateSlice: t1 - t0,
      serviceModel: t2 - t1,
      buildEndpoints: t3 - t2,
      inputsDigest: t4 - t3,
      applyDelta: t5 - t4,
      encodes: state.encoder.encodes - encodesBefore,
    },
  };
}

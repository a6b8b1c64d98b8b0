/** Test helpers: compile files into an in-memory snapshot and look at what a node is served. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readInputFiles } from '../../src/inputs/files.js';
import { compileTexts, type InputText, type PipelineResult } from '../../src/pipeline.js';
import { classifyNode, resourcesForClass } from '../../src/snapshot/classify.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { configDump } from '../../src/xds/config-dump.js';
import { resourceToJson } from '../../src/xds/json.js';
import { XDS_TYPE_NAME, XDS_TYPES, type XdsType } from '../../src/xds/type-urls.js';
import { BOOKINFO_STATE, ISTIO_SAMPLES, REPO } from './paths.js';

export async function compilePaths(paths: readonly string[]): Promise<PipelineResult> {
  return compileTexts(await readInputFiles(paths), { hasher: nodeSha256Hex });
}

export function compileFiles(paths: readonly string[]): PipelineResult {
  const texts: InputText[] = paths.map((file) => ({ file, text: readFileSync(file, 'utf8') }));
  return compileTexts(texts, { hasher: nodeSha256Hex });
}

export interface TestNode {
  readonly id: string;
  readonly metadata?: Record<string, unknown>;
}

/** What a node is served from a built snapshot: per type, name → decoded JSON (config_dump style). */
export function served(
  result: PipelineResult,
  node: TestNode,
): { classId: string; resources: Record<XdsType, Map<string, Record<string, unknown>>> } {
  const { content, objects } = result.snapshot;
  const placed = classifyNode(content, { id: node.id, metadata: node.metadata ?? {} });
  if (!placed.ok) throw new Error(placed.reason);
  const table = resourcesForClass(content, placed.classId);
  if (!table) throw new Error(`no class ${placed.classId}`);
  const resources = {} as Record<XdsType, Map<string, Record<string, unknown>>>;
  for (const type of XDS_TYPES) {
    resources[type] = new Map();
    for (const [name, digest] of table[type]) {
      const bytes = objects.get(digest);
      if (!bytes) throw new Error(`object ${digest} missing`);
      resources[type].set(name, resourceToJson(XDS_TYPE_NAME[type], bytes) as Record<string, unknown>);
    }
  }
  return { classId: placed.classId, resources };
}

/** config_dump JSON for a node, optionally limited to some types. */
export function servedDump(result: PipelineResult, node: TestNode, types: readonly XdsType[] = XDS_TYPES) {
  const { content, objects } = result.snapshot;
  const placed = classifyNode(content, { id: node.id, metadata: node.metadata ?? {} });
  if (!placed.ok) throw new Error(placed.reason);
  const table = resourcesForClass(content, placed.classId);
  if (!table) throw new Error(`no class ${placed.classId}`);
  const sections: Partial<Record<XdsType, { name: string; bytes: Uint8Array }[]>> = {};
  for (const type of types)
    sections[type] = [...table[type]].map(([name, digest]) => ({ name, bytes: objects.get(digest) as Uint8Array }));
  return { classId: placed.classId, dump: configDump('golden', sections) };
}

export const BOOKINFO_NODES = {
  productpage: {
    id: 'sidecar~10.244.0.16~productpage-v1-5f6d7c8b9-abcde.default~default.svc.cluster.local',
    metadata: {
      NAMESPACE: 'default',
      LABELS: { app: 'productpage', version: 'v1', 'security.istio.io/tlsMode': 'istio' },
      INSTANCE_IPS: '10.244.0.16',
    },
  },
  reviewsV2: {
    id: 'sidecar~10.244.0.14~reviews-v2-5f6d7c8b9-abcde.default~default.svc.cluster.local',
    metadata: {
      NAMESPACE: 'default',
      LABELS: { app: 'reviews', version: 'v2', 'security.istio.io/tlsMode': 'istio' },
      INSTANCE_IPS: '10.244.0.14',
    },
  },
  grpcClient: {
    id: 'sidecar~10.244.0.99~client.default~default.svc.cluster.local',
    metadata: { NAMESPACE: 'default', GENERATOR: 'grpc' },
  },
} satisfies Record<string, TestNode>;

/** The bookinfo cluster state plus `texts` (`extra-<i>.yaml`), compiled. */
export function compileBookinfo(...texts: string[]): PipelineResult {
  return compileTexts(
    [
      { file: BOOKINFO_STATE, text: readFileSync(BOOKINFO_STATE, 'utf8') },
      ...texts.map((text, i) => ({ file: `extra-${i}.yaml`, text })),
    ],
    { hasher: nodeSha256Hex },
  );
}

/** The bookinfo cluster state plus `texts`, asserted free of warnings and errors (an Envoy rejection would be one). */
export function compileBookinfoClean(...texts: string[]): PipelineResult {
  const r = compileBookinfo(...texts);
  assert.deepEqual(
    r.diagnostics.filter((d) => d.severity !== 'info').map((d) => `${d.code} ${d.field}: ${d.message}`),
    [],
  );
  return r;
}

/** Each line of `text` (trimmed) indented by `by`: YAML blocks spliced into a document. */
export const indentYaml = (text: string, by: string): string =>
  text
    .trim()
    .split('\n')
    .map((l) => `${by}${l}`)
    .join('\n');

/**
 * Istio's helloworld sample behind its Gateway API Gateway (the gateway-api-helloworld golden's
 * deployment), on the bookinfo cluster state, plus `extra` (`extra.yaml`).
 */
export function compileHelloworldGatewayApi(extra: string): PipelineResult {
  return compileTexts(
    [
      BOOKINFO_STATE,
      join(ISTIO_SAMPLES, 'helloworld', 'helloworld.yaml'),
      join(ISTIO_SAMPLES, 'helloworld', 'gateway-api', 'helloworld-gateway.yaml'),
      join(ISTIO_SAMPLES, 'helloworld', 'gateway-api', 'helloworld-route.yaml'),
      join(REPO, 'test', 'golden', 'gateway-api-helloworld', 'gateway-deployment.yaml'),
    ]
      .map((file) => ({ file, text: readFileSync(file, 'utf8') }))
      .concat([{ file: 'extra.yaml', text: extra }]),
    { hasher: nodeSha256Hex },
  );
}

/** A pod of the helloworld Gateway API Gateway's deployment (labelled with the gateway's name). */
export const HELLOWORLD_GATEWAY_NODE: TestNode = {
  id: 'router~10.244.0.30~helloworld-gateway-istio-0.default~default.svc.cluster.local',
  metadata: {
    NAMESPACE: 'default',
    LABELS: {
      'gateway.networking.k8s.io/gateway-name': 'helloworld-gateway',
      'service.istio.io/canonical-name': 'helloworld-gateway-istio',
    },
  },
};

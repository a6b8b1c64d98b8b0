/**
 * `explain` over a stored version: loads what the proxy is served (decoded), resolves the proxy
 * (`pod` from the stored inputs) and the destination IP (the Service's cluster IP from the stored
 * inputs, or the proxy's own IP for inbound calls), then asks the pure matcher (src/explain/).
 * Shared by `meshsnap explain` and GET …/snapshots/:v/explain. No node:* (it runs in Workers).
 */
import { GATEWAY_NAME_LABEL } from '../model/gateway-api.js';
import { badRequest, hasErrorCode, notFound } from '../errors.js';
import { across, explain, isIp, type AcrossAnswer, type Explanation, type JsonObject } from '../explain/index.js';
import { selectVersion, versionLabel } from '../history/select.js';
import { classifyNode, resourcesForClass } from '../snapshot/classify.js';
import { resourceBytes } from '../snapshot/composite.js';
import type { VersionRecord } from '../snapshot/manifest.js';
import { readStoredInputsIndex } from '../snapshot/stored-inputs/index.js';
import type { SnapshotStore } from '../snapshot/store/store.js';
import { resourceToJson } from '../xds/json.js';
import { XDS_TYPE_NAME, XDS_TYPES, type XdsType } from '../xds/type-urls.js';
import type { ExplainQuery, Namer, ProxyRef } from './explain-query.js';
import { ServedConfigNotFoundError, type ServedNode } from './served-config.js';

type Store = Pick<SnapshotStore, 'getSnapshot' | 'getObject' | 'getDocument'>;

/** At most this many versions in one `across` range. */
export const ACROSS_MAX_VERSIONS = 100;

export interface ExplainAnswer extends Explanation {
  readonly version: string;
  readonly digest: string;
  readonly node: { readonly id: string; readonly class: string };
}

const decoder = new TextDecoder();

async function servedResources(store: Store, digest: string, node: ServedNode) {
  const content = await store.getSnapshot(digest);
  if (!content) throw new ServedConfigNotFoundError(`snapshot ${digest} is missing from the store`);
  const placed = classifyNode(content, node);
  if (!placed.ok) throw new ServedConfigNotFoundError(placed.reason);
  const table = resourcesForClass(content, placed.classId);
  if (!table) throw new ServedConfigNotFoundError(`class ${placed.classId} is missing from snapshot ${digest}`);
  const maps = {} as Record<XdsType, Map<string, JsonObject>>;
  for (const type of XDS_TYPES) {
    maps[type] = new Map();
    for (const [name, objectDigest] of table[type]) {
      const bytes = await resourceBytes((d) => store.getObject(d), objectDigest);
      if (!bytes)
        throw new ServedConfigNotFoundError(`object ${objectDigest} (${type} ${name}) is missing from the store`);
      maps[type].set(name, resourceToJson(XDS_TYPE_NAME[type], bytes) as JsonObject);
    }
  }
  return { classId: placed.classId, resources: maps };
}

/** Reads stored input objects by key (`Kind/namespace/name`) of one version; the index is read at the first lookup. */
function inputReader(store: Store, record: VersionRecord) {
  const inputs = record.inputs;
  let index: ReturnType<typeof readStoredInputsIndex> | undefined;
  return async (key: string): Promise<Record<string, unknown> | undefined> => {
    if (inputs === undefined) return undefined;
    index ??= readStoredInputsIndex(store, inputs);
    const { config, endpoints } = await index;
    const d = config.get(key) ?? endpoints.get(key);
    const bytes = d === undefined ? null : await store.getObject(d);
    if (!bytes) return undefined;
    const value = JSON.parse(decoder.decode(bytes)) as unknown;
    return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
  };
}

type Reader = ReturnType<typeof inputReader>;
const field = (o: unknown, ...path: string[]): unknown =>
  path.reduce<unknown>(
    (v, k) => (v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined),
    o,
  );

/**
 * A pod of the stored inputs as the node its proxy would announce (Istio's node id and metadata):
 * a sidecar, or a router for a Gateway API gateway's pod (labelled `gateway.networking.k8s.io/gateway-name`).
 */
async function podNode(read: Reader, ref: Extract<ProxyRef, { kind: 'pod' }>): Promise<ServedNode> {
  const pod = await read(`Pod/${ref.namespace}/${ref.name}`);
  if (!pod) throw notFound(`pod ${ref.namespace}/${ref.name} is not in this version's stored inputs`);
  const ip = field(pod, 'status', 'podIP');
  const labels = field(pod, 'metadata', 'labels');
  // istio-agent sends its Kubernetes Node (NODE_NAME): the relay places the proxy in its locality's variant by it.
  const nodeName = field(pod, 'spec', 'nodeName');
  const ipText = typeof ip === 'string' ? ip : '0.0.0.0';
  const router = labels !== null && typeof labels === 'object' && Object.hasOwn(labels, GATEWAY_NAME_LABEL);
  return {
    id: `${router ? 'router' : 'sidecar'}~${ipText}~${ref.name}.${ref.namespace}~${ref.namespace}.svc.cluster.local`,
    metadata: {
      NAMESPACE: ref.namespace,
      LABELS: labels !== null && typeof labels === 'object' ? labels : {},
      ...(typeof ip === 'string' ? { INSTANCE_IPS: ip } : {}),
      ...(typeof nodeName === 'string' && nodeName !== '' ? { NODE_NAME: nodeName } : {}),
    },
  };
}

/** The node's own IP: INSTANCE_IPS (first), else the IP in its id (`sidecar~IP~…`). */
function nodeIp(node: ServedNode): string | undefined {
  const ips = node.metadata.INSTANCE_IPS;
  const first = typeof ips === 'string' ? ips.split(',')[0]?.trim() : undefined;
  if (first && isIp(first)) return first;
  const fromId = node.id.split('~')[1];
  return fromId !== undefined && isIp(fromId) ? fromId : undefined;
}

/**
 * The cluster IP a sidecar's DNS lookup of `host` gives: `name.ns.svc.<domain>`, `name.ns.svc`,
 * `name.ns`, or a bare `name` in the proxy's own namespace, looked up as a Service of the stored
 * inputs. Undefined for an unknown host or a headless Service.
 */
async function clusterIp(read: Reader, host: string, namespace: string | undefined): Promise<string | undefined> {
  const parts = host.split('.');
  const candidates: [string, string][] = [];
  if (parts.length === 1 && namespace !== undefined) candidates.push([namespace, host]);
  if (parts.length === 2 || (parts.length >= 3 && parts[2] === 'svc'))
    candidates.push([parts[1] as string, parts[0] as string]);
  for (const [ns, name] of candidates) {
    const ip = field(await read(`Service/${ns}/${name}`), 'spec', 'clusterIP');
    if (typeof ip === 'string' && isIp(ip)) return ip;
  }
  return undefined;
}

export async function explainVersion(store: Store, record: VersionRecord, query: ExplainQuery): Promise<ExplainAnswer> {
  const read = inputReader(store, record);
  if (query.proxy.kind === 'pod' && record.inputs === undefined)
    throw notFound(
      `version ${record.version} has no stored inputs to find pod ${query.proxy.namespace}/${query.proxy.name} in`,
    );
  const node = query.proxy.kind === 'pod' ? await podNode(read, query.proxy) : query.proxy;
  const { classId, resources } = await servedResources(store, record.digest, node);
  const req = query.request;
  const namespace = typeof node.metadata.NAMESPACE === 'string' ? node.metadata.NAMESPACE : undefined;
  const self = nodeIp(node);
  const destinationIp =
    req.direction === 'inbound'
      ? (self ?? (isIp(req.host) ? req.host : undefined))
      : isIp(req.host)
        ? req.host
        : await clusterIp(read, req.host, namespace);
  const explanation = explain(resources, {
    ...req,
    ...(destinationIp !== undefined ? { destinationIp } : {}),
    ...(self !== undefined && req.direction === 'outbound' ? { sourceIp: self } : {}),
  });
  return {
    version: versionLabel(record),
    digest: record.digest,
    node: { id: node.id, class: classId },
    ...explanation,
  };
}

/** The same question asked of every version from `from` to `to` (selectors) of a channel. */
export async function explainAcross(
  store: SnapshotStore,
  channel: string,
  range: { from: string; to: string },
  query: ExplainQuery,
  name: Namer = (f) => f,
): Promise<AcrossAnswer & { readonly channel: string; readonly from: number; readonly to: number }> {
  const first = await selectVersion(store, channel, range.from);
  const last = await selectVersion(store, channel, range.to);
  if (first.status === 'candidate' || last.status === 'candidate')
    throw badRequest(`${name('across')} takes versions of the channel, not candidates`);
  if (first.version > last.version) throw badRequest(`${name('across')}: ${range.from} comes after ${range.to}`);
  if (last.version - first.version + 1 > ACROSS_MAX_VERSIONS)
    throw badRequest(`${name('across')}: at most ${ACROSS_MAX_VERSIONS} versions at once`);
  const answers: { version: string; explanation: Explanation }[] = [];
  for (let n = first.version; n <= last.version; n++) {
    const record = await store.getVersion(channel, n);
    if (!record) continue; // collected by gc
    answers.push({ version: String(n), explanation: await answerOrAbsence(store, record, query) });
  }
  return { channel, from: first.version, to: last.version, ...across(answers) };
}

/** A version where the proxy cannot be placed (its pod or namespace absent then) is an answer too: `no_proxy`. */
async function answerOrAbsence(store: Store, record: VersionRecord, query: ExplainQuery): Promise<Explanation> {
  try {
    const { version: _v, digest: _d, node: _n, ...explanation } = await explainVersion(store, record, query);
    return explanation;
  } catch (err) {
    if (!hasErrorCode(err) || err.code !== 'not_found') throw err;
    return {
      request: query.request,
      outcome: 'no_proxy',
      summary: err.message,
      clusters: [],
      provenance: [],
      notes: [],
    };
  }
}

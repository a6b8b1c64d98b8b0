/**
 * What one proxy is served from a stored snapshot, shaped like Envoy's /config_dump: the pure core
 * of `meshsnap show`, shared by the CLI and the HTTP API (so both answer the same). No node:*.
 */
import { MeshsnapError } from '../errors.js';
import { classifyNode, resourcesForClass } from '../snapshot/classify.js';
import { resourceBytes } from '../snapshot/composite.js';
import type { SnapshotStore } from '../snapshot/store/store.js';
import { configDump, type ServedResource } from '../xds/config-dump.js';
import type { XdsType } from '../xds/type-urls.js';

/** Something the snapshot or the store does not have (a class, a document, an object). */
export class ServedConfigNotFoundError extends MeshsnapError {
  override readonly name = 'NotFoundError';
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super('not_found', message, options);
  }
}

export interface ServedNode {
  readonly id: string;
  readonly metadata: Record<string, unknown>;
}

export async function servedConfig(
  store: Pick<SnapshotStore, 'getSnapshot' | 'getObject'>,
  digest: string,
  versionInfo: string,
  node: ServedNode,
  types: readonly XdsType[],
) {
  const content = await store.getSnapshot(digest);
  if (!content) throw new ServedConfigNotFoundError(`snapshot ${digest} is missing from the store`);
  const placed = classifyNode(content, node);
  if (!placed.ok) throw new ServedConfigNotFoundError(placed.reason);
  const resources = resourcesForClass(content, placed.classId);
  if (!resources) throw new ServedConfigNotFoundError(`class ${placed.classId} is missing from snapshot ${digest}`);
  const served: Partial<Record<XdsType, ServedResource[]>> = {};
  for (const type of types) {
    const list: ServedResource[] = [];
    for (const [name, objectDigest] of resources[type]) {
      const bytes = await resourceBytes((d) => store.getObject(d), objectDigest);
      if (!bytes)
        throw new ServedConfigNotFoundError(`object ${objectDigest} (${type} ${name}) is missing from the store`);
      list.push({ name, bytes });
    }
    served[type] = list;
  }
  return { classId: placed.classId, dump: configDump(versionInfo, served) };
}

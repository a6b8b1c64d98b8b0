/** Which proxy class `show` and `diff` chose for `--node`/`--metadata`, and the warning when it is the namespace's fallback. */
import { classifyNode, type NodeIdentity } from '../snapshot/classify.js';
import type { SnapshotStore } from '../snapshot/store/store.js';
import { note } from './output.js';

/** The class a node gets in a stored snapshot; undefined when the snapshot has none for it. */
export async function classOfNode(
  store: Pick<SnapshotStore, 'getSnapshot'>,
  digest: string,
  node: NodeIdentity,
): Promise<string | undefined> {
  const content = await store.getSnapshot(digest);
  if (!content) return undefined;
  const placed = classifyNode(content, node);
  return placed.ok ? placed.classId : undefined;
}

/** `sidecar/<ns>/_`: no service selects the node's LABELS (or none were given). */
export const isFallbackClass = (classId: string | undefined): boolean =>
  classId !== undefined && classId.startsWith('sidecar/') && classId.endsWith('/_');

export function warnOnFallback(classId: string | undefined, node: NodeIdentity): void {
  if (!isFallbackClass(classId)) return;
  const labels = node.metadata?.LABELS;
  const why =
    labels === undefined ? 'no --metadata LABELS were given' : 'no service of its namespace selects its LABELS';
  note(
    `warning: node ${node.id} got the namespace's selector-less class ${String(classId)} (${why}); pass --metadata '{"NAMESPACE":"…","LABELS":{…}}' to pick the pod's class`,
  );
}

/** `diff A B`: resources per proxy class and xDS type, and the input objects that changed. */
import { resourceReader } from '../../snapshot/composite.js';
import type { VersionRecord } from '../../snapshot/manifest.js';
import type { SnapshotStore } from '../../snapshot/store/store.js';
import { HistoryError } from '../errors.js';
import { inputsOf } from '../layers.js';
import { versionLabel } from '../select.js';
import { diffInputs, type InputChange } from './inputs.js';
import { diffResources, type ResourceDiffOptions } from './resources.js';
import type { VersionDiff } from './version-diff.js';

export async function diffVersions(
  store: SnapshotStore,
  a: VersionRecord,
  b: VersionRecord,
  opts: ResourceDiffOptions = {},
): Promise<VersionDiff> {
  const ca = await store.getSnapshot(a.digest);
  const cb = await store.getSnapshot(b.digest);
  if (!ca || !cb) throw new HistoryError(`snapshot ${!ca ? a.digest : b.digest} is missing from the store`, 'internal');
  const read = (d: string) => store.getObject(d);
  const resources = resourceReader(read);
  const classes =
    a.digest === b.digest
      ? []
      : await diffResources({ content: ca, getObject: resources }, { content: cb, getObject: resources }, opts);
  let inputs: InputChange[] | undefined;
  if (a.inputs !== undefined && b.inputs !== undefined)
    inputs = await diffInputs(await inputsOf(store, a), await inputsOf(store, b), read);
  return {
    from: { version: versionLabel(a), digest: a.digest },
    to: { version: versionLabel(b), digest: b.digest },
    classes,
    ...(inputs ? { inputs } : {}),
  };
}

export { diffResources, type ClassDiff, type ChangedResource, type TypeDiff, type SnapshotSide } from './resources.js';
export { diffInputs, type InputChange } from './inputs.js';
export { diffJson, formatChange, type FieldChange } from './structural.js';
export { formatVersionDiff } from './format.js';
export { diffLines, type DiffLine } from './lines.js';
export type { VersionDiff } from './version-diff.js';

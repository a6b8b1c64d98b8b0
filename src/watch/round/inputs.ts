/** A round's first step: the changed objects reviewed for last-known-good, and the stored inputs tree updated. */
import type { BuiltInputs, StoredInputsTree } from '../../snapshot/stored-inputs/index.js';
import type { LastKnownGood } from '../last-known-good.js';
import type { ObjectCache } from '../object-cache.js';

/** Only the objects that changed: rewritten leaves and their paths, and the new root. */
export function updateStoredInputs(
  changed: ReadonlySet<string>,
  cache: ObjectCache,
  lkg: LastKnownGood,
  tree: StoredInputsTree,
): BuiltInputs {
  for (const key of changed) {
    const current = cache.get(key);
    if (current) {
      lkg.review(current);
      tree.set(lkg.resolve(current));
    } else {
      lkg.forget(key);
      tree.delete(key);
    }
  }
  return tree.commit();
}

/** What a round asks the compiler: the changed keys, and the cache's objects as last-known-good resolves them. */
import type { ObjectSpool } from '../../snapshot/build.js';
import type { CompileRequest } from '../compiler.js';
import type { LastKnownGood } from '../last-known-good.js';
import type { CachedObject, ObjectCache } from '../object-cache.js';

export function compileRequest(
  changed: ReadonlySet<string>,
  inputsDigest: string,
  cache: ObjectCache,
  lkg: LastKnownGood,
  spool?: ObjectSpool,
): CompileRequest {
  let objects: CachedObject[] | undefined;
  return {
    changed,
    inputsDigest,
    ...(spool ? { spool } : {}),
    get: (key) => {
      const o = cache.get(key);
      return o ? lkg.resolve(o) : undefined;
    },
    // Sorted once, and only for a compiler that reads them all (full and remote compiles).
    get objects() {
      return (objects ??= sortedByKey(cache).map(([, o]) => lkg.resolve(o)));
    },
  };
}

/** The cache's entries by key string: the cache's own keys, not a `keyString` made per comparison (54k objects at 10k). */
function sortedByKey(cache: ObjectCache): [string, CachedObject][] {
  return [...cache.entries()].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
}

/**
 * A one-shot full build, for callers that build one snapshot and hand it on (the CLI, the Worker,
 * the Lambda: src/pipeline.ts). It gives exactly what `buildSnapshot` gives (digest, objects,
 * documents, content, counts, problems) but keeps little while it works: after the consistency
 * check, the output's groups are consumed one by one in id order — each resource encoded and
 * digested, each table's tree written — and taken out of the output, so their messages can be
 * collected while the next groups are built. What stays is bytes, digests, names and documents:
 * no copy of the tables, no trees, no encoder cache, no encoded wrapper holding a message.
 *
 * The watcher's SnapshotBuilder keeps all of these on purpose (it diffs the next output against them).
 */
import type { GroupId, OwnedCompileOutput, ResourceTable } from '../../compile/types.js';
import { XDS_TYPES, type XdsType } from '../../xds/type-urls.js';
import { ByteSlab } from '../../xds/wire/slab.js';
import { assertConsistentOnce } from '../consistency.js';
import { ResourceEncoder, type EncodedResource } from '../encoder.js';
import type { Part } from '../route-chunks.js';
import { DocumentSink, LAYER, writeTable } from '../tree.js';
import { lazyFullContent, type DigestColumns } from './full.js';
import { withLazyContent } from './lazy-content.js';
import { ObjectSet } from './refcounts.js';
import { emitClasses, emitGroupDocument, emitTop } from './trees.js';
import type { BuiltSnapshot, SnapshotBuildInfo, SnapshotBuildOptions } from './types.js';

export interface OneShotBuildOptions extends Pick<SnapshotBuildOptions, 'hasher' | 'spool'> {
  /**
   * A full garbage collection, run where much of the build's data has just died: after the
   * consistency check's references (its reader and index), after its Envoy check, and after each
   * third of the groups (their messages), the last before the classes' documents and the object
   * index are made (without it, the real CLI's peak at 10k with EnvoyFilters fell there). For a
   * process whose peak memory matters (`meshsnap compile`: src/full-gc.ts); the Worker has none.
   */
  readonly collect?: () => void;
}

/** How many times the build collects while it consumes the groups (collect, above), the one after the last aside. */
const COLLECTIONS_IN_GROUPS = 2;

/**
 * Builds the snapshot of `output`, emptying `output.groups` as it goes (the classes and selectors
 * stay). Throws InconsistentSnapshotError (consistency.ts), before taking anything apart, rather
 * than produce a snapshot a proxy would choke on.
 */
export function buildSnapshotOnce(
  output: OwnedCompileOutput,
  info: SnapshotBuildInfo,
  opts: OneShotBuildOptions = {},
): BuiltSnapshot {
  // The references are checked with a reader of its own, which dies before the Envoy check, and
  // Envoy's rules with a validator of its own: nothing of the check outlives it.
  assertConsistentOnce(output, opts.collect);
  opts.collect?.();
  const slab = new ByteSlab();
  // With a spool, each object's bytes are copied there as they are held: the encoder hands out
  // views of its writer's buffer (transient), not copies. Without one they are kept, in the slab.
  const encoder = new ResourceEncoder(opts.hasher, opts.spool ? { transient: true } : { cache: false, slab });
  const hasher = encoder.hasher;
  const sink = new DocumentSink(hasher, slab);
  const refs = new ObjectSet(opts.spool);
  const parts = new SeenParts();
  // Weak: a consumed group's messages still die as the build goes on.
  const held = new WeakMap<object, { readonly digest: string; readonly hold: number }>();
  const [ids] = byName(output.groups);
  const groupDocs = new Array<string>(ids.length);
  const columns = new Map<GroupId, Record<XdsType, DigestColumns>>();
  const collectEvery = Math.ceil(ids.length / (COLLECTIONS_IN_GROUPS + 1));
  for (let g = 0; g < ids.length; g++) {
    if (g > 0 && g % collectEvery === 0) opts.collect?.();
    const id = ids[g] as GroupId;
    const table = output.groups.get(id) as ResourceTable;
    output.groups.delete(id);
    const roots = {} as Record<XdsType, string>;
    const byType = {} as Record<XdsType, DigestColumns>;
    for (const type of XDS_TYPES) {
      const [names, messages] = byName(table[type] as ReadonlyMap<string, object>);
      const digests = new Array<string>(names.length);
      for (let i = 0; i < names.length; i++) {
        const message = messages[i] as object;
        // A frozen resource may be in several groups (an EDS assignment in its locality groups): encoded once.
        const again = Object.isFrozen(message) ? held.get(message) : undefined;
        if (again) {
          refs.holdAgain(type, again.hold);
          digests[i] = again.digest;
          continue;
        }
        const encoded = encoder.encode(type, message);
        const hold = refs.hold(type, parts.unseen(encoded));
        if (Object.isFrozen(message)) held.set(message, { digest: encoded.digest, hold });
        digests[i] = encoded.digest;
      }
      roots[type] = writeTable(names, digests, sink).digest;
      byType[type] = { names, digests };
    }
    groupDocs[g] = emitGroupDocument(roots, sink).digest;
    columns.set(id, byType);
  }
  opts.collect?.(); // the last third's messages
  const classes = emitClasses(output, sink);
  const { compiler, inputsDigest } = info;
  const digest = emitTop(sink, info, classes.doc.digest, writeTable(ids, groupDocs, sink, LAYER.index).digest);
  const content = lazyFullContent(info, columns, classes.classes, classes.selectors);
  const { clusters, endpoints, listeners, routes, objects } = refs.sizes();
  return withLazyContent(
    {
      digest,
      inputsDigest,
      compiler,
      counts: { clusters, endpoints, listeners, routes, classes: classes.classes.length, objects },
      objects: refs.sortedAll(),
      documents: sink.sorted(),
    },
    content,
  );
}

/**
 * The keys of `map` in string order, and its values in the same order. The compiler emits most
 * tables in name order already: then nothing is sorted and nothing looked up.
 */
function byName<V>(map: ReadonlyMap<string, V>): [string[], V[]] {
  const names = [...map.keys()];
  for (let i = 1; i < names.length; i++)
    if ((names[i - 1] as string) >= (names[i] as string)) {
      names.sort();
      return [names, names.map((name) => map.get(name) as V)];
    }
  return [names, [...map.values()]];
}

/**
 * The parts of composites already held. The chunker hands the same part objects to the route
 * config of every client namespace (~1250 parts × 200 namespaces at 10k services): each is given to
 * the ObjectSet once, not once per config that lists it.
 */
class SeenParts {
  private readonly seen = new Set<Part>();

  /** `encoded` without the parts given before (the same objects, so the same digests and bytes). */
  unseen(encoded: EncodedResource): EncodedResource {
    if (!encoded.parts) return encoded;
    const fresh: Part[] = [];
    for (const part of encoded.parts)
      if (!this.seen.has(part)) {
        this.seen.add(part);
        fresh.push(part);
      }
    return fresh.length === encoded.parts.length ? encoded : { ...encoded, parts: fresh };
  }
}

/** Snapshots from an expanded content, for one compiled elsewhere. */
import { XDS_TYPES, type XdsType } from '../../xds/type-urls.js';
import { snapshotDocuments, type SnapshotContent } from '../content.js';
import type { Hasher } from '../digest.js';
import type { BuiltSnapshot, SnapshotCounts } from './types.js';

/** Distinct resources per type (a resource in several groups counts once; same name, other bytes counts twice). */
export function snapshotCounts(content: SnapshotContent): SnapshotCounts {
  const perType = {} as Record<XdsType, number>;
  const objects = new Set<string>();
  for (const type of XDS_TYPES) {
    const seen = new Set<string>();
    for (const group of Object.values(content.groups)) {
      for (const [name, digest] of Object.entries(group[type])) {
        seen.add(`${name}\n${digest}`);
        objects.add(digest);
      }
    }
    perType[type] = seen.size;
  }
  return { ...perType, classes: content.classes.length, objects: objects.size };
}

/**
 * A BuiltSnapshot from an expanded snapshot and its objects (e.g. a snapshot compiled elsewhere):
 * every object and document, as a full build gives them.
 */
export function snapshotFromContent(
  content: SnapshotContent,
  objects: ReadonlyMap<string, Uint8Array>,
  hasher?: Hasher,
): BuiltSnapshot {
  const { digest, documents } = snapshotDocuments(content, hasher);
  const sorted = new Map<string, Uint8Array>();
  for (const d of [...objects.keys()].sort()) sorted.set(d, objects.get(d) as Uint8Array);
  return {
    digest,
    inputsDigest: content.inputsDigest,
    compiler: content.compiler,
    content,
    counts: snapshotCounts(content),
    objects: sorted,
    documents,
  };
}

/**
 * Builds an immutable snapshot from the compiler's output: every resource encoded to protobuf
 * once, objects named by their digest, and a canonical JSON document tying groups, classes and
 * selectors to those digests. The same inputs, in any order, give the same digest and bytes.
 */
import type { ClassSelector, CompileOutput, ProxyClass } from '../compile/types.js';
import { XDS_TYPES, type XdsType } from '../xds/type-urls.js';
import { assertConsistent } from './consistency.js';
import { SNAPSHOT_SCHEMA, snapshotDigest, type CompilerInfo, type GroupDigests, type SnapshotContent } from './content.js';
import type { Hasher } from './digest.js';
import { ResourceEncoder } from './encoder.js';

export interface SnapshotBuildInfo {
  readonly inputsDigest: string;
  readonly compiler: CompilerInfo;
}

export interface SnapshotBuildOptions {
  /** Hash for object and snapshot digests (default: @noble/hashes). Ignored for objects when `encoder` is given. */
  readonly hasher?: Hasher;
  /** Reuse across builds so unchanged message objects are not encoded again. */
  readonly encoder?: ResourceEncoder;
}

export interface BuiltSnapshot {
  readonly digest: string;
  readonly content: SnapshotContent;
  /** digest → protobuf bytes, sorted by digest. */
  readonly objects: ReadonlyMap<string, Uint8Array>;
}

/** Throws InconsistentSnapshotError (consistency.ts) rather than produce a snapshot a proxy would choke on. */
export function buildSnapshot(output: CompileOutput, info: SnapshotBuildInfo, opts: SnapshotBuildOptions = {}): BuiltSnapshot {
  assertConsistent(output);
  const encoder = opts.encoder ?? new ResourceEncoder(opts.hasher);
  const found = new Map<string, Uint8Array>();
  const groups: Record<string, GroupDigests> = {};
  for (const id of [...output.groups.keys()].sort()) {
    const table = output.groups.get(id);
    if (!table) continue;
    const digests = {} as Record<XdsType, Record<string, string>>;
    for (const type of XDS_TYPES) {
      const byName: Record<string, string> = {};
      const messages = table[type] as ReadonlyMap<string, object>;
      for (const name of [...messages.keys()].sort()) {
        const encoded = encoder.encode(type, messages.get(name) as object);
        byName[name] = encoded.digest;
        found.set(encoded.digest, encoded.bytes);
      }
      digests[type] = byName;
    }
    groups[id] = digests;
  }

  const content: SnapshotContent = {
    schema: SNAPSHOT_SCHEMA,
    compiler: { name: info.compiler.name, version: info.compiler.version },
    inputsDigest: info.inputsDigest,
    groups,
    classes: [...output.classes].sort((a, b) => compare(a.id, b.id)).map(copyClass),
    selectors: [...output.selectors].sort((a, b) => compare(a.namespace, b.namespace) || compare(a.hostname, b.hostname)).map(copySelector),
  };
  const objects = new Map<string, Uint8Array>();
  for (const digest of [...found.keys()].sort()) objects.set(digest, found.get(digest) as Uint8Array);
  return { digest: snapshotDigest(content, opts.hasher ?? encoder.hasher), content, objects };
}

export interface SnapshotCounts {
  readonly clusters: number;
  readonly endpoints: number;
  readonly listeners: number;
  readonly routes: number;
  readonly classes: number;
  /** Distinct stored objects. */
  readonly objects: number;
}

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

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

// Plain copies, so the document holds exactly the contract's fields whatever objects the compiler used.
const copyClass = (c: ProxyClass): ProxyClass => ({ id: c.id, generator: c.generator, namespace: c.namespace, services: [...c.services], groups: [...c.groups] });
const copySelector = (s: ClassSelector): ClassSelector => ({ namespace: s.namespace, hostname: s.hostname, selector: { ...s.selector } });

/**
 * `verify N`: recompile N from its stored inputs and check the snapshot digest is byte-identical
 * (reproducible builds). When it is not, say why: another compiler version, inputs missing from
 * the store, inputs that no longer validate the same way, and which resources differ. Equal
 * digests are not enough: every stored document and object of N is re-read and re-hashed
 * (integrity.ts), so a corrupt one is named.
 */
import { resourceReader } from '../snapshot/composite.js';
import type { CompilerInfo } from '../snapshot/content.js';
import type { Hasher } from '../snapshot/digest.js';
import type { VersionRecord } from '../snapshot/manifest.js';
import type { SnapshotStore } from '../snapshot/store/store.js';
import { COMPILER } from '../version.js';
import { diffResources, type ClassDiff } from './diff/resources.js';
import { storedIntegrityProblems } from './integrity.js';
import { compileStored, inputsOf, loadLayer } from './layers.js';
import { versionLabel } from './select.js';

export interface VerifyResult {
  readonly version: string;
  readonly ok: boolean;
  readonly digest: string;
  readonly recompiled?: string;
  readonly compiler: { readonly recorded: CompilerInfo; readonly running: CompilerInfo };
  readonly reasons: readonly string[];
  /** Resources that differ (recorded → recompiled), when the digests differ. */
  readonly differences?: readonly ClassDiff[];
}

export async function verifyVersion(
  store: SnapshotStore,
  record: VersionRecord,
  hasher?: Hasher,
  running: CompilerInfo = COMPILER,
): Promise<VerifyResult> {
  const base = {
    version: versionLabel(record),
    digest: record.digest,
    compiler: { recorded: record.compiler, running },
  };
  const sameCompiler = record.compiler.name === running.name && record.compiler.version === running.version;
  const compilerReason = sameCompiler
    ? []
    : [
        `compiled by ${record.compiler.name} ${record.compiler.version}, recompiled by ${running.name} ${running.version}`,
      ];
  const corrupt = await storedIntegrityProblems(store, record, hasher);
  let docs;
  try {
    const index = await inputsOf(store, record);
    docs = [...(await loadLayer(store, index, 'config')), ...(await loadLayer(store, index, 'endpoints'))];
  } catch (err) {
    return {
      ...base,
      ok: false,
      reasons: [...corrupt, `inputs missing: ${(err as Error).message}`, ...compilerReason],
    };
  }
  const compiled = compileStored(docs, hasher);
  const recompiled = compiled.snapshot.digest;
  if (recompiled === record.digest) return { ...base, ok: corrupt.length === 0, recompiled, reasons: corrupt };

  const reasons = [...corrupt, ...compilerReason];
  if (compiled.snapshot.inputsDigest !== record.inputsDigest)
    reasons.push('the stored inputs validate to different inputs than were compiled (inputs digest differs)');
  const stored = await store.getSnapshot(record.digest);
  let differences: ClassDiff[] | undefined;
  if (stored) {
    const built = compiled.snapshot.objects;
    differences = await diffResources(
      { content: stored, getObject: resourceReader((d) => store.getObject(d)) },
      {
        content: compiled.snapshot.content,
        getObject: resourceReader(async (d) => built.get(d) ?? store.getObject(d)),
      },
    );
    if (differences.length > 0) reasons.push(`${differences.length} proxy class(es) get different resources`);
  } else reasons.push(`the stored snapshot ${record.digest} is missing`);
  if (reasons.length === 0)
    reasons.push('digests differ, resources are the same: the snapshot metadata (compiler or inputs digest) differs');
  return { ...base, ok: false, recompiled, reasons, ...(differences ? { differences } : {}) };
}

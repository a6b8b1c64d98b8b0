/** What a round did, as the watcher records and logs it. */
import type { CompileResult } from '../compiler.js';
import type { PublishedRound } from './publish.js';

export interface RoundResult {
  readonly mode: CompileResult['mode'];
  /** `refused`: the publish guard kept the served version (the snapshot is a candidate). */
  readonly publish: PublishedRound['published']['status'] | 'refused';
  readonly digest: string;
  readonly version: number;
  readonly compileMs: number;
  /** Last-known-good review and the stored inputs tree update of the changed objects. */
  readonly inputsMs: number;
  /** Reading the head and writing inputs, objects, documents, version record and head. */
  readonly publishMs: number;
  /** Object and document bytes this round added to the store (stored inputs and snapshot). */
  readonly bytesWritten: number;
  readonly documentsWritten: number;
}

export function roundResult(
  mode: CompileResult['mode'],
  times: { readonly inputsMs: number; readonly compileMs: number },
  stored: PublishedRound,
): RoundResult {
  const { published, publishMs, bytesWritten, documentsWritten } = stored;
  const head = published.status === 'published' ? published.record : published.head;
  return {
    mode,
    publish: stored.refused ? 'refused' : published.status,
    digest: head.digest,
    version: head.version,
    compileMs: times.compileMs,
    inputsMs: times.inputsMs,
    publishMs,
    bytesWritten,
    documentsWritten,
  };
}

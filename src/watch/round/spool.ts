/**
 * A round's object spool (src/snapshot/build/object-spool.ts): where a full build (the first
 * round, a restart, the round after a failed publish) puts its objects' bytes, so the watcher
 * does not hold them all on top of its own state until the publish has streamed the checkpoint
 * pack from it. The temp file (src/snapshot/store/file-spool.ts) is opened at the first append
 * only: a delta round, which spools nothing, costs nothing. The round closes it when published.
 */
import type { ObjectSpool } from '../../snapshot/build.js';
import { FileSpool, spoolDirOf } from '../../snapshot/store/file-spool.js';
import type { SnapshotStore } from '../../snapshot/store/store.js';

export class RoundSpool implements ObjectSpool {
  private file: FileSpool | undefined;

  private constructor(private readonly dir: string) {}

  /**
   * A spool for a round that publishes to `store`, or undefined when the store cannot stream a
   * pack from it (S3, R2: the pack is sent in one piece, so the bytes would be read back anyway).
   */
  static forStore(store: SnapshotStore): RoundSpool | undefined {
    return store.putObjectParts ? new RoundSpool(spoolDirOf(store)) : undefined;
  }

  append(bytes: Uint8Array, group?: number): number {
    this.file ??= FileSpool.open(this.dir);
    return this.file.append(bytes, group);
  }

  readGroup(group: number): (handle: number) => Uint8Array {
    return this.opened().readGroup(group);
  }

  read(handle: number): Uint8Array {
    return this.opened().read(handle);
  }

  byteLength(handle: number): number {
    return this.opened().byteLength(handle);
  }

  /** Whether a temp file was opened (and not yet closed). */
  get isOpen(): boolean {
    return this.file !== undefined;
  }

  /** Closes the temp file, if one was opened; later reads throw. Idempotent. */
  close(): void {
    const file = this.file;
    this.file = undefined;
    file?.close();
  }

  private opened(): FileSpool {
    if (!this.file) throw new Error('the round spool holds nothing (or is closed)');
    return this.file;
  }
}

/**
 * The folder store's head hint: a file-system watch on a channel's folder, so a relay on the same
 * folder reads a new head at once instead of at its next poll. head.json is replaced by a rename
 * (and removed just before), so the folder sees it; the version records live one folder below and
 * are not watched. Events are only hints (fs.watch may merge, repeat or, on some file systems, miss
 * them): the reader still polls.
 */
import { watch, type FSWatcher } from 'node:fs';

const HEAD_FILE = 'head.json';

/** Watches `channelDir` for head.json changes; undefined when the folder does not exist yet. */
export function watchHeadFile(channelDir: string, onHint: () => void): (() => void) | undefined {
  let watcher: FSWatcher;
  try {
    watcher = watch(channelDir, { persistent: false }, (_event, file) => {
      // Some platforms give no file name: treat that as a hint too.
      if (file === null || String(file) === HEAD_FILE) onHint();
    });
  } catch {
    return undefined; // ENOENT before the first publish, or a file system without watches
  }
  // A watch that fails later (the folder removed) is closed; the reader's polling carries on.
  watcher.on('error', () => watcher.close());
  return () => watcher.close();
}

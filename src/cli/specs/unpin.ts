/** `meshsnap unpin`: its option table (used by --help and the README test), without the command's implementation. */
import { command } from '../args.js';
import { historyOptions } from './options.js';

export const unpinSpec = command({
  name: 'unpin',
  summary: 'follow the cluster’s config again',
  options: historyOptions,
  examples: ["meshsnap unpin --reason 'sale is over'"],
});

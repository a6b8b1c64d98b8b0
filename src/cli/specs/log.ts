/** `meshsnap log`: its option table (used by --help and the README test), without the command's implementation. */
import { command, storeOptions } from '../args.js';

export const logSpec = command({
  name: 'log',
  summary: 'list a channel’s versions, newest first',
  options: {
    ...storeOptions,
    limit: { type: 'string', value: 'N', help: 'print at most N versions (a whole number ≥ 1)' },
  },
  examples: ['meshsnap log --limit 5', 'meshsnap log --channel staging --store s3://bucket/meshsnap'],
});

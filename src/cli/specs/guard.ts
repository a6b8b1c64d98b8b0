/** `meshsnap guard`: its option table (used by --help and the README test), without the command's implementation. */
import { command } from '../args.js';
import { historyOptions } from './options.js';

export const guardSpec = command({
  name: 'guard',
  summary: 'show or set the channel’s publish guard threshold (see Safety in the README)',
  options: {
    ...historyOptions,
    'max-shrink': {
      type: 'string',
      value: 'PERCENT',
      help: 'refuse a publish that loses more than this share of services, clusters or endpoints (0–100; default 50)',
    },
  },
  examples: ['meshsnap guard', 'meshsnap guard --max-shrink 30 --reason "tighter for prod"'],
});

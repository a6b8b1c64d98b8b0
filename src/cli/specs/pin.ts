/** `meshsnap pin`: its option table (used by --help and the README test), without the command's implementation. */
import { command } from '../args.js';
import { actorOptions, requiredReasonOption } from './options.js';

export const pinSpec = command({
  name: 'pin',
  summary:
    'pin what is served (VERSION must have the served config; to serve another: rollback VERSION); config changes become candidates',
  args: '[VERSION|latest]',
  positionals: { max: 1 },
  // --reason is required, as by the API.
  options: {
    ...requiredReasonOption,
    ...actorOptions,
    force: { type: 'boolean', default: false, help: 'move an existing pin' },
  },
  examples: ["meshsnap pin --reason 'freeze during the sale'", "meshsnap pin 7 --reason 'known good'"],
});

/** `meshsnap promote`: its option table (used by --help and the README test), without the command's implementation. */
import { command } from '../args.js';
import { actorOptions, requiredReasonOption } from './options.js';

export const promoteSpec = command({
  name: 'promote',
  summary: 'serve a candidate recorded while pinned',
  args: '<candidate:N|VERSION>',
  positionals: { min: 1, max: 1 },
  // --reason is required, as by the API.
  options: {
    ...requiredReasonOption,
    ...actorOptions,
    force: {
      type: 'boolean',
      default: false,
      help: 'even when clusters that have endpoints in the target would be served none',
    },
  },
  examples: ["meshsnap promote candidate:3 --reason 'reviewed in #1234'"],
});

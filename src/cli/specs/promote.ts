/** `meshsnap promote`: its option table (used by --help and the README test), without the command's implementation. */
import { command } from '../args.js';
import { actorOptions, forceEmptyEndpointsOption, requiredReasonOption } from './options.js';

export const promoteSpec = command({
  name: 'promote',
  summary: 'serve a candidate recorded while pinned',
  args: '<candidate:N|VERSION>',
  positionals: { min: 1, max: 1 },
  // --reason is required, as by the API.
  options: {
    ...requiredReasonOption,
    ...actorOptions,
    ...forceEmptyEndpointsOption,
  },
  examples: ["meshsnap promote candidate:3 --reason 'reviewed in #1234'"],
});

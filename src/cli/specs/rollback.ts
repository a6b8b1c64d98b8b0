/** `meshsnap rollback`: its option table (used by --help and the README test), without the command's implementation. */
import { command } from '../args.js';
import { actorOptions, forceEmptyEndpointsOption, requiredReasonOption } from './options.js';

export const rollbackSpec = command({
  name: 'rollback',
  summary: 'serve an earlier version’s config with the current endpoints (pins the channel)',
  args: '<VERSION|tag:NAME>',
  positionals: { min: 1, max: 1 },
  // --reason is required, as by the API's POST …/rollback.
  options: {
    ...requiredReasonOption,
    ...actorOptions,
    ...forceEmptyEndpointsOption,
  },
  examples: [
    "meshsnap rollback 6 --reason 'v7 broke checkout'",
    "meshsnap rollback tag:v1.2 --reason 'back to the release'",
  ],
});

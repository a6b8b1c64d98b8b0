/** `meshsnap diagnostics`: its option table (used by --help and the README test), without the command's implementation. */
import { command, storeOptions } from '../args.js';

export const diagnosticsSpec = command({
  name: 'diagnostics',
  summary: 'print a version’s diagnostics, one JSON line each',
  args: '[VERSION|latest|tag:NAME|candidate:N]',
  positionals: { max: 1 },
  options: storeOptions,
  examples: ['meshsnap diagnostics latest', 'meshsnap diagnostics 7 --channel staging'],
});

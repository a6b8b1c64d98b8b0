/** `meshsnap verify`: its option table (used by --help and the README test), without the command's implementation. */
import { command, storeOptions } from '../args.js';

export const verifySpec = command({
  name: 'verify',
  summary: 'recompile a version from its stored inputs and check the digest is identical',
  args: '[VERSION|latest|tag:NAME|candidate:N]',
  positionals: { max: 1 },
  options: { ...storeOptions, all: { type: 'boolean', default: false, help: 'verify every version of the channel' } },
  examples: ['meshsnap verify latest', 'meshsnap verify --all'],
});

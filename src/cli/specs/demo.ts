/** `meshsnap demo`: its option table (used by --help and the README test), without the command's implementation. */
import { command, storeOptions } from '../args.js';

export const demoSpec = command({
  name: 'demo',
  summary: 'compile the bundled example mesh and summarize a proxy’s config',
  options: storeOptions,
  examples: ['meshsnap demo', 'meshsnap demo --store /tmp/demo-store --channel demo'],
});

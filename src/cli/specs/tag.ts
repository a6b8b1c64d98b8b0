/** `meshsnap tag`: its option table (used by --help and the README test), without the command's implementation. */
import { command } from '../args.js';
import { actorOptions } from './options.js';

export const tagSpec = command({
  name: 'tag',
  summary: 'name a version (e.g. a git SHA); list or delete tags',
  args: '[<VERSION> <NAME>]',
  positionals: { max: 2 },
  options: {
    delete: { type: 'string', value: 'NAME', help: 'delete this tag (exit 1 when there is none)' },
    force: { type: 'boolean', default: false, help: 'move a tag that already names another version' },
    ...actorOptions,
  },
  examples: [
    'meshsnap tag 7 3f9c2e1',
    'meshsnap tag 8 3f9c2e1 --force',
    'meshsnap tag',
    'meshsnap tag --delete 3f9c2e1',
  ],
});

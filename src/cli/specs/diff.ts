/** `meshsnap diff`: its option table (used by --help and the README test), without the command's implementation. */
import { command, storeOptions } from '../args.js';
import { nodeOptions, typeOption } from './options.js';

export const diffSpec = command({
  name: 'diff',
  summary: 'what changed between two versions, per proxy class and xDS type, and in the inputs',
  args: '<A> <B>',
  positionals: { min: 2, max: 2 },
  options: {
    ...nodeOptions,
    ...typeOption,
    json: { type: 'boolean', default: false, help: 'one JSON object instead of text' },
    jsonl: {
      type: 'boolean',
      default: false,
      help: 'one JSON line per changed resource or input object, after a {from, to} line (for diffs too large for one JSON document)',
    },
    ...storeOptions,
  },
  examples: [
    'meshsnap diff 3 4',
    `meshsnap diff tag:v1.2 latest --type routes --node 'sidecar~10.244.1.10~web-v1-6c9f7d8b5-k2x7p.shop~shop.svc.cluster.local' --metadata '{"NAMESPACE":"shop","LABELS":{"app":"web"}}'`,
  ],
});

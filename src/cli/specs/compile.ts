/** `meshsnap compile`: its option table (used by --help and the README test), without the command's implementation. */
import { command } from '../args.js';
import { historyOptions } from './options.js';

export const compileSpec = command({
  name: 'compile',
  summary: 'compile Istio config + services into a stored snapshot',
  args: '<file|dir>...',
  positionals: { min: 1 },
  options: {
    ...historyOptions,
    strict: { type: 'boolean', default: false, help: 'exit 1 and store nothing when there is any error diagnostic' },
    'dry-run': { type: 'boolean', default: false, help: 'compile and print the line a publish would; store nothing' },
    'mesh-config': { type: 'string', value: 'FILE', help: 'a mesh config file (ConfigMap istio or kind: MeshConfig)' },
    'allow-shrink': {
      type: 'boolean',
      default: false,
      help: 'publish even when the publish guard would refuse (see Safety in the README)',
    },
    'source-revision': {
      type: 'string',
      value: 'REV',
      help: 'the source revision the inputs come from (default: the git commit of the inputs when inside a git work tree)',
    },
    'source-url': { type: 'string', value: 'URL', help: 'where that revision lives (default: the git remote origin)' },
    quiet: {
      type: 'boolean',
      short: 'q',
      default: false,
      help: 'do not print the warning and error diagnostics on stderr (they are still stored and counted)',
    },
  },
  examples: [
    'meshsnap compile k8s/ istio/ --reason "reviews 50/50"',
    'meshsnap compile mesh.yaml --strict --dry-run',
    'meshsnap compile k8s/ --source-revision 3f9c2e1 --source-url https://git.example/mesh.git',
  ],
});

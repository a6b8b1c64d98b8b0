/** `meshsnap gc`: its option table (used by --help and the README test), without the command's implementation. */
import { command } from '../args.js';
import { actorOptions } from './options.js';

export const gcSpec = command({
  name: 'gc',
  summary: 'delete old versions and unreferenced data (tagged, pinned, current are kept)',
  options: {
    keep: { type: 'string', value: 'N', help: 'keep the newest N versions per channel, N ≥ 1 (default: 10)' },
    'keep-days': { type: 'string', value: 'D', help: 'also keep versions younger than D days' },
    'audit-days': {
      type: 'string',
      value: 'D',
      help: 'delete relay audit batches older than D days (default: 30; operator actions are kept)',
    },
    'grace-minutes': {
      type: 'string',
      value: 'M',
      help: 'delete unreferenced data only when older than M minutes (default: 60)',
    },
    'dry-run': { type: 'boolean', default: false, help: 'say what would be deleted; delete nothing' },
    ...actorOptions,
  },
  examples: ['meshsnap gc --keep 20 --dry-run', 'meshsnap gc --keep-days 30 --store s3://bucket/meshsnap'],
});

/** `meshsnap audit`: its option table (used by --help and the README test), without the command's implementation. */
import { command, storeOptions } from '../args.js';

export const auditSpec = command({
  name: 'audit',
  summary:
    'publishes, rollbacks, pins, promotions, tags, gc runs and relay connects, disconnects and ACK/NACKs (one line per push), oldest first',
  options: {
    ...storeOptions,
    since: {
      type: 'string',
      value: 'ISO|15m|2h|7d',
      help: 'only events at or after this time (ISO 8601) or this long ago',
    },
    proxy: { type: 'string', value: 'NODE_ID', help: 'only the relay events of this proxy' },
    json: { type: 'boolean', default: false, help: 'one JSON object per event (every ACK record) instead of text' },
  },
  examples: [
    'meshsnap audit --since 2h',
    "meshsnap audit --proxy 'sidecar~10.244.1.10~web-v1-6c9f7d8b5-k2x7p.shop~shop.svc.cluster.local' --json",
  ],
});

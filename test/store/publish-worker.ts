/** Child process for the concurrency test: publishes snapshots [from, from+count) to a channel. */
import { LocalStore } from '../../src/snapshot/store/local.js';
import { publishSnapshot } from '../../src/snapshot/store/publish.js';
import { CREATED_AT, nthSnapshot } from './helpers.js';

const [root, channel, from, count] = process.argv.slice(2);
const store = new LocalStore(root);
const start = Number(from);
const results = await Promise.all(
  Array.from({ length: Number(count) }, (_, i) =>
    publishSnapshot(store, channel as string, nthSnapshot(start + i), { createdAt: CREATED_AT }),
  ),
);
process.stdout.write(JSON.stringify(results.map((r) => (r.status === 'published' ? r.record.version : -1))));

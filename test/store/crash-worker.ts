/**
 * Child process for the crash test: publishes a big snapshot, says so, then keeps publishing
 * new revisions until it is killed. argv: store spec (folder or s3://…), services.
 */
import { openStore } from '../../src/snapshot/store/open.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { publishSnapshot } from '../../src/snapshot/store/publish.js';
import { CREATED_AT, meshSnapshot } from './helpers.js';

const [spec, services] = process.argv.slice(2);
const store = openStore(spec);
for (let rev = 1; ; rev++) {
  // Every tenth revision moves many services: bigger writes, more chances to die mid-way.
  const res = await publishSnapshot(store, 'main', meshSnapshot(Number(services), rev, rev % 3 === 0 ? 200 : 5), {
    createdAt: CREATED_AT,
    hasher: nodeSha256Hex,
  });
  process.stdout.write(`${JSON.stringify({ rev, status: res.status })}\n`);
}

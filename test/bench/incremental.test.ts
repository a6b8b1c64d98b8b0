import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WatchPath } from '../../bench/incremental.js';
import { generateMesh, nthAddress, withMovedEndpoint } from '../../bench/synthetic.js';
import { loadStoredInputs } from '../../src/snapshot/stored-inputs/index.js';
import { compileDocuments } from '../../src/pipeline.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';

test('the benchmarked endpoint-change path is the watcher, incremental end to end, equal to a full compile', async () => {
  const mesh = generateMesh({ services: 60, perNamespace: 20 });
  const path = new WatchPath(nodeSha256Hex);
  try {
    const first = await path.initial(mesh.docs);
    assert.equal(first.round.mode, 'full');
    assert.equal(first.round.publish, 'published');
    assert.equal(first.round.digest, compileDocuments(mesh.docs, { hasher: nodeSha256Hex }).snapshot.digest);

    let docs = mesh.docs;
    for (let i = 0; i < 4; i++) {
      const moved = withMovedEndpoint(docs, 10 + 11 * i, nthAddress([10, 250], i));
      const changed = moved.docs.find((d, k) => d !== docs[k]);
      assert.ok(changed);
      const { round } = await path.change(changed);
      docs = moved.docs;
      assert.equal(round.mode, 'incremental');
      assert.equal(round.publish, 'published');
      // One slice object, a few inputs documents, one or two assignments, a few snapshot documents.
      assert.ok(round.documentsWritten > 0 && round.documentsWritten < 20, `${round.documentsWritten} documents`);
      assert.ok(round.bytesWritten < first.round.bytesWritten / 20, `${round.bytesWritten} bytes written`);
    }
    const head = await path.store.readChannel('bench');
    assert.ok(head);
    const full = compileDocuments(docs, { hasher: nodeSha256Hex });
    assert.equal(head.digest, full.snapshot.digest);
    // The version record names the stored inputs, which are the snapshot's inputs and recompile to it.
    const record = await path.store.getVersion('bench', head.version);
    assert.equal(record?.inputs, full.stored.digest);
    assert.equal(record?.inputsDigest, full.stored.digest);
    const again = compileDocuments(await loadStoredInputs(path.store, full.stored.digest), { hasher: nodeSha256Hex });
    assert.equal(again.snapshot.digest, head.digest);
  } finally {
    path.close();
  }
});

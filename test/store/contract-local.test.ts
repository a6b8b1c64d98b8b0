/** The store contract on the local folder store. */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { LocalStore } from '../../src/snapshot/store/local.js';
import { runStoreContract } from './contract.js';
import { tempStoreDir } from './helpers.js';

runStoreContract({
  name: 'local folder',
  conditional: true,
  open: async () => {
    const root = tempStoreDir();
    return {
      store: new LocalStore(root),
      rawPut: async (key, bytes) => {
        await mkdir(dirname(join(root, key)), { recursive: true });
        await writeFile(join(root, key), bytes);
      },
    };
  },
});

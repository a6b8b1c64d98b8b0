/** The bookinfo inputs the function tests post, and what Node compiles them to. */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { compileTexts, type InputText } from '../../src/pipeline.js';
import type { Hasher } from '../../src/snapshot/digest.js';
import { BOOKINFO_STATE, ISTIO_SAMPLES } from '../helpers/paths.js';

const NET = join(ISTIO_SAMPLES, 'bookinfo', 'networking');

export const BASE_PATHS = [
  join(ISTIO_SAMPLES, 'bookinfo', 'platform', 'kube', 'bookinfo.yaml'),
  BOOKINFO_STATE,
  join(NET, 'destination-rule-all.yaml'),
];
export const REVIEWS_V3 = join(NET, 'virtual-service-reviews-v3.yaml');
export const REVIEWS_50_V3 = join(NET, 'virtual-service-reviews-50-v3.yaml');

export const nodeHasher: Hasher = (bytes) => createHash('sha256').update(bytes).digest('hex');

export async function readInputs(paths: readonly string[]): Promise<InputText[]> {
  return Promise.all(paths.map(async (p) => ({ file: basename(p), text: await readFile(p, 'utf8') })));
}

/** The snapshot digest the Node build (CLI, `meshsnap serve`) gives these files. */
export const nodeDigest = (files: readonly InputText[]): string =>
  compileTexts(files, { hasher: nodeHasher }).snapshot.digest;

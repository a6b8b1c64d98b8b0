/** A temp local store with a bookinfo history, built through the same library calls as `meshsnap compile`. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import type { HistoryContext } from '../../src/history/context.js';
import { publishCompiled } from '../../src/history/publish.js';
import { selectVersion } from '../../src/history/select.js';
import { verifyVersion } from '../../src/history/verify.js';
import { compileTexts, type PipelineResult } from '../../src/pipeline.js';
import { LocalStore, nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { BOOKINFO_STATE, ISTIO_SAMPLES } from '../helpers/paths.js';

export const NET = join(ISTIO_SAMPLES, 'bookinfo', 'networking');
export const STATE = readFileSync(BOOKINFO_STATE, 'utf8');
/** The same cluster after every pod moved: new pod IPs in Pods and EndpointSlices. */
export const movedState = (octet: number): string => STATE.replaceAll('10.244.0.', `10.${octet}.0.`);
export const sample = (name: string): { file: string; text: string } => ({
  file: name,
  text: readFileSync(join(NET, name), 'utf8'),
});

export function tempStore(): { store: LocalStore; dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'meshsnap-hist-'));
  return { store: new LocalStore(dir), dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function context(store: LocalStore, extra: Partial<HistoryContext> = {}): HistoryContext {
  return { store, channel: 'main', actor: 'alice', now: () => new Date(), hasher: nodeSha256Hex, ...extra };
}

/** Compiles state + destination rules + the given VirtualService files and publishes them. */
export async function compileAndPublish(
  store: LocalStore,
  state: string,
  vsFiles: readonly string[],
  channel = 'main',
): Promise<number> {
  const r = compileTexts(
    [{ file: 'state.yaml', text: state }, sample('destination-rule-all.yaml'), ...vsFiles.map(sample)],
    { hasher: nodeSha256Hex },
  );
  const published = await publishCompiled(
    store,
    channel,
    { snapshot: r.snapshot, diagnostics: r.diagnostics, stored: r.stored },
    {},
    new Date().toISOString(),
  );
  return published.status === 'published' ? published.record.version : published.head.version;
}

/** Publishes a compile to an empty store's `main` as version 1, and asserts `meshsnap verify` recompiles it byte-identically. */
export async function publishAndVerify(store: LocalStore, r: PipelineResult): Promise<void> {
  const published = await publishCompiled(
    store,
    'main',
    { snapshot: r.snapshot, diagnostics: r.diagnostics, stored: r.stored },
    {},
    new Date().toISOString(),
  );
  assert.equal(published.status, 'published');
  const verified = await verifyVersion(store, await selectVersion(store, 'main', '1'), nodeSha256Hex);
  assert.ok(verified.ok, verified.reasons.join('; '));
}

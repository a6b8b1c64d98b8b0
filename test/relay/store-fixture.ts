/** Relay test helpers: a temp LocalStore with bookinfo versions published into it, and a way to break objects. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PipelineResult } from '../../src/pipeline.js';
import { LocalStore } from '../../src/snapshot/store/local.js';
import { publishSnapshot } from '../../src/snapshot/store/publish.js';
import { compileFiles } from '../helpers/mesh.js';
import { BOOKINFO_STATE, ISTIO_SAMPLES } from '../helpers/paths.js';

export { BOOKINFO_NODES } from '../helpers/mesh.js';

const NET = join(ISTIO_SAMPLES, 'bookinfo', 'networking');
/** Input sets giving distinct snapshots. */
export const INPUTS = {
  base: [BOOKINFO_STATE, join(NET, 'destination-rule-all.yaml')],
  reviews50: [BOOKINFO_STATE, join(NET, 'destination-rule-all.yaml'), join(NET, 'virtual-service-reviews-50-v3.yaml')],
  reviewsV3: [BOOKINFO_STATE, join(NET, 'destination-rule-all.yaml'), join(NET, 'virtual-service-reviews-v3.yaml')],
} as const;

const compiled = new Map<string, PipelineResult>();
export function compileSet(name: keyof typeof INPUTS): PipelineResult {
  let r = compiled.get(name);
  if (!r) {
    r = compileFiles(INPUTS[name]);
    compiled.set(name, r);
  }
  return r;
}

export function tempDir(prefix = 'meshsnap-relay-'): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function publishSet(
  store: LocalStore,
  name: keyof typeof INPUTS,
  channel = 'main',
): Promise<{ version: number; digest: string }> {
  const r = compileSet(name);
  const out = await publishSnapshot(store, channel, r.snapshot, { createdAt: new Date().toISOString() });
  return out.status === 'published' ? { version: out.record.version, digest: out.record.digest } : out.head;
}

/** Digests of objects in `next` that `base` does not have. */
export function newObjects(base: keyof typeof INPUTS, next: keyof typeof INPUTS): string[] {
  const have = compileSet(base).snapshot.objects;
  return [...compileSet(next).snapshot.objects.keys()].filter((d) => !have.has(d));
}

/** Overwrites an object file's bytes in place (what bit rot or a bad copy would do). */
export function corruptObject(store: LocalStore, digest: string): void {
  writeFileSync(store.objectPath(digest), new Uint8Array([1, 2, 3, 4]));
}

/** Waits until `check` returns a truthy value (polling), or fails after `ms`. */
export async function eventually<T>(
  check: () => T | Promise<T>,
  ms = 10_000,
  what = 'condition',
): Promise<NonNullable<T>> {
  const until = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v as NonNullable<T>;
    } catch (e) {
      last = e;
    }
    if (Date.now() > until)
      throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

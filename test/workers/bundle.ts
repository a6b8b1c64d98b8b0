/**
 * Bundles a Worker entry the way wrangler would for plain workerd (no `nodejs_compat`): ESM,
 * platform neutral, browser/worker package conditions. A `node:*` import anywhere in the graph
 * fails the build, which is the first half of the "runs in workerd" proof.
 */
import { build } from 'esbuild';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface WorkerBundle {
  readonly path: string;
  readonly text: string;
  /** Bundled input files, relative to the repo (e.g. `src/compile/index.ts`, `node_modules/...`). */
  readonly inputs: readonly string[];
}

export async function bundleWorker(entry: string, outDir: string, repo: string): Promise<WorkerBundle> {
  const outfile = join(outDir, 'worker.mjs');
  const result = await build({
    entryPoints: [entry],
    outfile,
    absWorkingDir: repo,
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['module', 'main'],
    minify: false,
    metafile: true,
    logLevel: 'silent',
  });
  return { path: outfile, text: await readFile(outfile, 'utf8'), inputs: Object.keys(result.metafile.inputs).sort() };
}

export interface DynamicCode {
  /** The bundled module the occurrence is in (esbuild's `// path` banner). */
  readonly module: string;
  readonly snippet: string;
}

/**
 * Occurrences of `new Function(` and `eval(` in a non-minified esbuild bundle, each attributed to
 * the module it came from via the `// <path>` comment esbuild writes before every module.
 */
export function findDynamicCode(text: string): DynamicCode[] {
  const banners = [...text.matchAll(/^\/\/ ((?:src|node_modules|functions)\/\S+)$/gm)].map((m) => ({
    at: m.index,
    path: m[1] as string,
  }));
  const found: DynamicCode[] = [];
  // `eval(a, b) {` is a method named eval (re2js has one), not a call of the global eval.
  for (const m of text.matchAll(/\bnew\s+Function\s*\(|(?<![.\w$])eval\s*\((?![^()]*\)\s*\{)/g)) {
    let module = '(bundle prologue)';
    for (const b of banners) {
      if (b.at > m.index) break;
      module = b.path;
    }
    found.push({ module, snippet: text.slice(Math.max(0, m.index - 40), m.index + 60).replace(/\s+/g, ' ') });
  }
  return found;
}

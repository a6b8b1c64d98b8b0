/**
 * A minimal Cloudflare Worker around the pure compile core: POST a JSON array of `{file, text}`,
 * get back `{digest, counts, diagnostics}` of the snapshot those files compile to.
 *
 * It exists to prove the core runs unchanged in workerd (no Node built-ins, no `new Function`,
 * the default pure-JS hasher); test/workers/compile-in-workerd.test.ts bundles and runs it.
 */
import { compile } from '../../src/compile/index.js';
import { sortDiagnostics, type Diagnostic } from '../../src/inputs/diagnostics.js';
import { buildInputSet } from '../../src/inputs/index.js';
import { parseDocuments, type RawDocument } from '../../src/inputs/parse.js';
import { storedInputsOfDocuments } from '../../src/model/stored-inputs.js';
import { buildSnapshot, type SnapshotCounts } from '../../src/snapshot/build.js';
import type { Hasher } from '../../src/snapshot/digest.js';

export interface InputFile {
  readonly file: string;
  readonly text: string;
}

export interface CompileSummary {
  readonly digest: string;
  readonly counts: SnapshotCounts;
  readonly diagnostics: readonly Diagnostic[];
}

export const COMPILER = { name: 'meshsnap-worker', version: '0.1.0' } as const;

/** Files in name order, so the result does not depend on the order they were posted in. */
const byName = (files: readonly InputFile[]): InputFile[] => [...files].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));

/**
 * parse → stored inputs (their root is the inputs digest, as in src/pipeline.ts) + buildInputSet →
 * compile → buildSnapshot. Pure; `hasher` defaults to @noble/hashes.
 */
export function compileFiles(files: readonly InputFile[], hasher?: Hasher): CompileSummary {
  const sorted = byName(files);
  const docs: RawDocument[] = [];
  const parseDiagnostics: Diagnostic[] = [];
  for (const f of sorted) {
    const parsed = parseDocuments(f.text, f.file);
    docs.push(...parsed.docs);
    parseDiagnostics.push(...parsed.diagnostics);
  }
  const inputs = buildInputSet(docs);
  const { output, diagnostics } = compile({ ...inputs, diagnostics: [...parseDiagnostics, ...inputs.diagnostics] });
  const inputsDigest = storedInputsOfDocuments(docs, hasher).digest;
  const snapshot = buildSnapshot(output, { inputsDigest, compiler: COMPILER }, hasher ? { hasher } : {});
  return { digest: snapshot.digest, counts: snapshot.counts, diagnostics: sortDiagnostics(diagnostics) };
}

function isInputFiles(value: unknown): value is InputFile[] {
  return Array.isArray(value) && value.every((f) => f !== null && typeof f === 'object' && typeof (f as InputFile).file === 'string' && typeof (f as InputFile).text === 'string');
}

const json = (body: unknown, status = 200): Response => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

export default {
  async fetch(request: Request): Promise<Response> {
    if (request.method !== 'POST') return json({ error: 'POST a JSON array of {file, text}' }, 405);
    let body: unknown;
    try {
      body = await request.json();
    } catch {
      return json({ error: 'body is not JSON' }, 400);
    }
    if (!isInputFiles(body)) return json({ error: 'expected a JSON array of {file, text}' }, 400);
    try {
      return json(compileFiles(body));
    } catch (e) {
      // Only a compiler bug gets here (user data yields diagnostics): say so rather than hang up.
      return json({ error: e instanceof Error ? `${e.name}: ${e.message}` : String(e) }, 500);
    }
  },
};

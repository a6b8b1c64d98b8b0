/**
 * The Node edge of the inputs layer: read files and folders, then hand the text to the pure
 * parser and validator.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { InputSet } from '../model/inputs.js';
import { buildInputSet } from './load.js';
import { parseDocuments, type RawDocument } from './parse.js';
import { sortDiagnostics, type Diagnostic } from '../model/diagnostics.js';

const EXTENSIONS = ['.yaml', '.yml', '.json'];

export interface InputFile {
  readonly file: string;
  readonly text: string;
}

/**
 * Reads files and folders (recursively, `.yaml`/`.yml`/`.json` only). Files inside a folder come
 * in sorted path order, so diagnostics are listed in a stable order. A missing path is an Error.
 */
export async function readInputFiles(paths: readonly string[]): Promise<InputFile[]> {
  const out: InputFile[] = [];
  for (const p of paths) {
    let info;
    try {
      info = await stat(p);
    } catch {
      throw new Error(`input path not found: ${p}`);
    }
    const files = info.isDirectory() ? (await listFiles(p)).map((f) => join(p, f)) : [p];
    for (const file of files) out.push({ file, text: await readFile(file, 'utf8') });
  }
  return out;
}

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && EXTENSIONS.some((ext) => e.name.toLowerCase().endsWith(ext)))
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

export interface LoadOptions {
  /** A file holding the mesh config (a MeshConfig document or Istio's `istio` ConfigMap). */
  readonly meshConfig?: string;
}

/** Reads, parses and validates: paths → InputSet (parse diagnostics included). */
export async function loadInputsFromPaths(paths: readonly string[], opts: LoadOptions = {}): Promise<InputSet> {
  const files = await readInputFiles(opts.meshConfig !== undefined ? [...paths, opts.meshConfig] : paths);
  const docs: RawDocument[] = [];
  const parseDiags: Diagnostic[] = [];
  for (const { file, text } of files) {
    const parsed = parseDocuments(text, file);
    for (const d of parsed.docs) docs.push(d);
    for (const d of parsed.diagnostics) parseDiags.push(d);
  }
  const inputs = buildInputSet(docs);
  return { ...inputs, diagnostics: sortDiagnostics([...parseDiags, ...inputs.diagnostics]) };
}

/**
 * The objects of a channel's inputs folder → the input texts to compile. A folder is read as
 * `meshsnap compile DIR` reads one: every YAML/JSON object is a file. A `.json` object shaped
 * `{"files": [{"file", "text"}, ...]}` is a bundle (one upload carrying a whole set, as a watcher
 * would send it) and is expanded in its place. Pure.
 */
import { MeshsnapError } from '../../src/errors.js';
import type { InputText } from '../../src/pipeline.js';

export interface InputObject {
  /** The key below the channel's folder (used as the file name in diagnostics). */
  readonly name: string;
  readonly text: string;
}

export class InputBundleError extends MeshsnapError {
  override readonly name = 'InputBundleError';
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super('bad_request', message, options);
  }
}

function bundleFiles(name: string, value: unknown): InputText[] | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || !('files' in value)) return null;
  const files = (value as { files: unknown }).files;
  if (!Array.isArray(files)) throw new InputBundleError(`${name}: "files" must be an array of {file, text}`);
  return files.map((f, i) => {
    const o = f as { file?: unknown; text?: unknown } | null;
    if (o === null || typeof o !== 'object' || typeof o.text !== 'string')
      throw new InputBundleError(`${name}: files[${i}].text must be a string`);
    return {
      file: typeof o.file === 'string' && o.file !== '' ? `${name}#${o.file}` : `${name}#files[${i}]`,
      text: o.text,
    };
  });
}

/** Input texts in key order (the compile result does not depend on it; diagnostics read better). */
export function inputTexts(objects: readonly InputObject[]): InputText[] {
  const out: InputText[] = [];
  for (const o of [...objects].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (o.name.toLowerCase().endsWith('.json')) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(o.text);
      } catch {
        parsed = undefined; // not JSON after all: the parser reports it with file and position
      }
      const files = bundleFiles(o.name, parsed);
      if (files) {
        for (const f of files) out.push(f);
        continue;
      }
    }
    out.push({ file: o.name, text: o.text });
  }
  return out;
}

/** Keys that are inputs: YAML and JSON files (folder markers and other uploads are ignored). */
export const isInputKey = (key: string): boolean => /\.(ya?ml|json)$/i.test(key);

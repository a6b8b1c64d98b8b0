/**
 * Parsing: text of one file → raw documents, the way `kubectl apply -f` reads it (multi-document
 * YAML or JSON, `---` separators, empty documents skipped, `List` kinds expanded).
 * Pure: never throws on user data; every problem becomes a `parse-error` diagnostic.
 */
import { parseAllDocuments } from 'yaml';
import type { Diagnostic } from '../model/diagnostics.js';
import { documentExceeds, INPUT_LIMITS, mib, TOO_LARGE } from './limits.js';
import { parseYamlFast } from './yaml-fast.js';

/** One object as written by the user, with where it came from. */
export interface RawDocument {
  readonly file: string;
  /** 0-based index of the document in its file (List items share their List's index). */
  readonly index: number;
  readonly object: Readonly<Record<string, unknown>>;
}

export interface ParseResult {
  readonly docs: RawDocument[];
  readonly diagnostics: Diagnostic[];
}

/** Real Kubernetes/Istio objects are nowhere near this deep; deeper is garbage or an attack. */
export const MAX_DEPTH = 64;
/** YAML alias expansion limit (billion-laughs guard). */
const MAX_ALIAS_COUNT = 100;

export function parseDocuments(text: string, file: string): ParseResult {
  const docs: RawDocument[] = [];
  const diagnostics: Diagnostic[] = [];
  const values = looksLikeJson(text) ? parseJson(text) : undefined;
  // Common block-style YAML takes the fast path (yaml-fast.ts); anything else, errors included, the library.
  const parsed = values ?? parseYamlFast(text, INPUT_LIMITS.maxObjectBytes) ?? parseYaml(text, file, diagnostics);
  for (const [index, value] of parsed.entries()) {
    if (value === undefined) continue; // a YAML document that failed; already reported
    addDocument(value, file, index, docs, diagnostics, false);
  }
  return { docs, diagnostics };
}

function addDocument(
  value: unknown,
  file: string,
  index: number,
  docs: RawDocument[],
  diagnostics: Diagnostic[],
  inList: boolean,
): void {
  if (value === null || value === undefined) return; // empty document (`---` followed by nothing)
  const err = (message: string): void => {
    diagnostics.push({ severity: 'error', code: 'parse-error', message, file, index });
  };
  if (typeof value !== 'object' || Array.isArray(value)) {
    err(`document is ${Array.isArray(value) ? 'a list' : `a ${typeof value}`}, expected an object`);
    return;
  }
  const object = value as Record<string, unknown>;
  const kind = object['kind'];
  const isList = !inList && typeof kind === 'string' && kind.endsWith('List') && Array.isArray(object['items']);
  const exceeds = documentExceeds(object, MAX_DEPTH, INPUT_LIMITS.maxObjectBytes);
  if (exceeds === 'depth') {
    err(`document is nested deeper than ${MAX_DEPTH} levels`);
    return;
  }
  // A List is not bounded as a whole: each item is, as its own object.
  if (exceeds === 'size' && !isList) {
    diagnostics.push(tooLarge(file, index, identity(object)));
    return;
  }
  if (isList) {
    for (const item of object['items'] as unknown[]) {
      if (item === null || typeof item !== 'object' || Array.isArray(item)) {
        err(`an item of ${kind} is not an object`);
        continue;
      }
      addDocument(item, file, index, docs, diagnostics, true);
    }
    return;
  }
  docs.push({ file, index, object });
}

function looksLikeJson(text: string): boolean {
  const first = text.trimStart()[0];
  return first === '{' || first === '[';
}

/** Whole-file JSON (one object or an array of objects is one document). Undefined: not JSON, try YAML. */
function parseJson(text: string): unknown[] | undefined {
  try {
    return [JSON.parse(text) as unknown];
  } catch {
    return undefined;
  }
}

/** The `yaml` library's reading of a file, every document's problem a diagnostic. */
export function parseYaml(text: string, file: string, diagnostics: Diagnostic[]): unknown[] {
  const out: unknown[] = [];
  let documents;
  try {
    documents = parseAllDocuments(text, { merge: true, uniqueKeys: true, prettyErrors: false, logLevel: 'silent' });
  } catch (e) {
    // The YAML library recurses; absurd nesting can exhaust the stack. Report, never throw.
    diagnostics.push({
      severity: 'error',
      code: 'parse-error',
      message: `cannot parse: ${errorMessage(e)}`,
      file,
      index: 0,
    });
    return out;
  }
  const list = Array.isArray(documents) ? documents : [];
  for (const [index, doc] of list.entries()) {
    const [start, , end] = doc.range;
    // Refused before it is built: a huge object costs memory and time at every later step.
    if (end - start > INPUT_LIMITS.maxObjectBytes && !String(doc.get('kind') ?? '').endsWith('List')) {
      diagnostics.push(
        tooLarge(file, index, {
          kind: doc.get('kind'),
          namespace: doc.getIn(['metadata', 'namespace']),
          name: doc.getIn(['metadata', 'name']),
        }),
      );
      out.push(undefined);
      continue;
    }
    if (doc.errors.length > 0) {
      const first = doc.errors[0];
      diagnostics.push({
        severity: 'error',
        code: 'parse-error',
        message: `YAML syntax error: ${first ? oneLine(first.message) : 'unknown'}`,
        file,
        index,
      });
      out.push(undefined);
      continue;
    }
    try {
      out.push(doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT }));
    } catch (e) {
      diagnostics.push({
        severity: 'error',
        code: 'parse-error',
        message: `cannot read document: ${errorMessage(e)}`,
        file,
        index,
      });
      out.push(undefined);
    }
  }
  return out;
}

function identity(o: Record<string, unknown>): { kind: unknown; namespace: unknown; name: unknown } {
  const m = o['metadata'];
  const meta = m !== null && typeof m === 'object' ? (m as Record<string, unknown>) : {};
  return { kind: o['kind'], namespace: meta['namespace'], name: meta['name'] };
}

function tooLarge(file: string, index: number, id: { kind: unknown; namespace: unknown; name: unknown }): Diagnostic {
  const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v.slice(0, 253) : undefined);
  const kind = text(id.kind);
  const namespace = text(id.namespace);
  const name = text(id.name);
  return {
    severity: 'error',
    code: TOO_LARGE,
    message: `object is larger than ${mib(INPUT_LIMITS.maxObjectBytes)} (the Kubernetes limit); refused`,
    file,
    index,
    ...(kind !== undefined ? { kind } : {}),
    ...(namespace !== undefined ? { namespace } : {}),
    ...(name !== undefined ? { name } : {}),
  };
}

function errorMessage(e: unknown): string {
  return oneLine(e instanceof Error ? e.message : String(e));
}

function oneLine(s: string): string {
  const line = s.split('\n')[0] ?? '';
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

/** Shared by the inputs tests: YAML text → InputSet, and finders for diagnostics. */
import type { Diagnostic } from '../../src/model/diagnostics.js';
import { buildInputSet } from '../../src/inputs/load.js';
import { parseDocuments } from '../../src/inputs/parse.js';
import type { InputSet } from '../../src/model/inputs.js';

export function loadText(text: string, file = 'test.yaml'): InputSet {
  const parsed = parseDocuments(text, file);
  const inputs = buildInputSet(parsed.docs);
  return { ...inputs, diagnostics: [...parsed.diagnostics, ...inputs.diagnostics] };
}

export const errors = (inputs: InputSet): Diagnostic[] => inputs.diagnostics.filter((d) => d.severity === 'error');

/** The single error diagnostic, failing with the whole list when there is not exactly one. */
export function onlyError(inputs: InputSet): Diagnostic {
  const errs = errors(inputs);
  if (errs.length !== 1) throw new Error(`expected exactly one error, got ${JSON.stringify(errs, null, 1)}`);
  return errs[0]!;
}

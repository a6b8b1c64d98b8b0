/** The pure inputs API: parse text into documents, validate documents into an InputSet. (Node file reading: files.ts.) */
export { parseDocuments, type RawDocument, type ParseResult } from './parse.js';
export { buildInputSet } from './load.js';
export { buildInputSetRetaining } from './retain.js';
export { parseDurationMs } from './validate/duration.js';
export { regexProblem } from './validate/string-match.js';

/**
 * A fast path for the YAML most manifests are written in: block mappings and sequences of plain,
 * single- or double-quoted one-line scalars, `[]`/`{}` and simple flow lists, comments, `---`
 * separators. It returns the same values the `yaml` library gives (core schema, as parse.ts calls
 * it), one per document (null for an empty one), or undefined as soon as the text uses anything
 * else: anchors, aliases, tags, block scalars, multi-line scalars, merge keys, duplicate keys,
 * directives, tabs, a number it does not read exactly as the library does. parse.ts then parses
 * the whole file with the library, so every error, limit and diagnostic stays the library's.
 * Pure.
 */

/** A value this fast path does not read (thrown inside, turned into `undefined` at the top). */
class NotHandled extends Error {}
const bail = (): never => {
  throw new NotHandled();
};

interface Line {
  readonly indent: number;
  /** The text after the indentation, comment and trailing spaces removed; never empty. */
  readonly text: string;
}

/** Every document's value (null: empty), or undefined when the text needs the full parser. */
export function parseYamlFast(text: string, maxDocumentChars: number): unknown[] | undefined {
  try {
    return documents(text, maxDocumentChars);
  } catch (e) {
    if (e instanceof NotHandled) return undefined;
    throw e;
  }
}

/** A byte-order mark or a control character (the library reports or strips them): not here. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const UNUSUAL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufeff]/;
/** Deeper indentation than this is not a manifest; the parser here recurses once per level. */
const MAX_INDENT = 1000;

function documents(text: string, maxDocumentChars: number): unknown[] {
  if (UNUSUAL.test(text)) bail();
  const out: unknown[] = [];
  let lines: Line[] = [];
  let chars = 0;
  let started = false; // a `---` was seen, or content: the current chunk is a document
  const flush = (): void => {
    if (started || lines.length > 0) out.push(lines.length > 0 ? documentValue(lines) : null);
    lines = [];
    chars = 0;
  };
  let pos = 0;
  while (pos <= text.length) {
    // The line is text[start, stop): no copy of it is made, only of its content.
    const start = pos;
    let stop = text.indexOf('\n', pos);
    if (stop < 0) stop = text.length;
    pos = stop + 1;
    if (text.charCodeAt(stop - 1) === 13) stop--;
    if (text.startsWith('---', start) && (stop - start === 3 || text.charCodeAt(start + 3) === 32)) {
      if (stripComment(text.slice(start + 3, stop)).trim() !== '') bail(); // content on the `---` line
      if (started || lines.length > 0) flush();
      started = true;
      continue;
    }
    if (text.startsWith('...', start) || text.startsWith('%', start)) bail();
    // The library refuses a large document: let it say so (blank and comment lines counted too).
    chars += stop - start + 1;
    if (chars > maxDocumentChars) bail();
    const line = lineOf(text, start, stop);
    if (line) lines.push(line);
  }
  if (lines.length > 0 || started) flush();
  return out;
}

/** The line text[start, stop) without its indentation, comment and trailing spaces. */
function lineOf(text: string, start: number, stop: number): Line | undefined {
  let at = start;
  while (at < stop && text.charCodeAt(at) === 32) at++;
  if (at === stop) return undefined;
  const indent = at - start;
  if (text.charCodeAt(at) === 9 || indent > MAX_INDENT) bail(); // a tab in the indentation
  const content = stripComment(text.slice(at, stop)).trimEnd();
  if (content === '') return undefined;
  if (content.includes('\t')) bail();
  return { indent, text: content };
}

/** The text before a comment (`#` at the start or after a space, outside quotes). */
function stripComment(s: string): string {
  const hash = s.indexOf('#');
  if (hash < 0) return s;
  if (!s.includes('"') && !s.includes("'")) {
    for (let i = hash; i >= 0; i = s.indexOf('#', i + 1)) if (i === 0 || s[i - 1] === ' ') return s.slice(0, i);
    return s;
  }
  let quote = '';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    if (quote === '"') {
      if (ch === '\\') i++;
      else if (ch === '"') quote = '';
    } else if (quote === "'") {
      if (ch === "'" && s[i + 1] === "'") i++;
      else if (ch === "'") quote = '';
    } else if (ch === '"' || ch === "'") {
      // A quote opens a scalar only where one starts; inside a plain scalar it is a character.
      if (i === 0 || s[i - 1] === ' ' || s[i - 1] === '[' || s[i - 1] === ',') quote = ch;
    } else if (ch === '#' && (i === 0 || s[i - 1] === ' ')) return s.slice(0, i);
  }
  return s;
}

function documentValue(lines: readonly Line[]): unknown {
  const first = lines[0] as Line;
  const [value, next] = block(lines, 0, first.indent);
  if (next !== lines.length) bail();
  return value;
}

const isSeqItem = (text: string): boolean => text === '-' || text.startsWith('- ');

/** A block node starting at line i, whose lines sit at `indent`. */
function block(lines: readonly Line[], i: number, indent: number): [unknown, number] {
  const line = lines[i] as Line;
  if (line.indent !== indent) bail();
  if (isSeqItem(line.text)) return sequence(lines, i, indent);
  if (keyEnd(line.text) >= 0) return mapping(lines, i, indent, line.text);
  // A lone scalar (a whole document, or a value on its own lines): one line only.
  if (i + 1 < lines.length && (lines[i + 1] as Line).indent >= indent && indent > 0) bail();
  return [scalar(line.text), i + 1];
}

function sequence(lines: readonly Line[], i: number, indent: number): [unknown[], number] {
  const out: unknown[] = [];
  while (i < lines.length) {
    const line = lines[i] as Line;
    if (line.indent !== indent || !isSeqItem(line.text)) break;
    let offset = 1;
    while (line.text.charCodeAt(offset) === 32) offset++;
    const rest = line.text.slice(offset);
    if (rest === '') {
      const next = lines[i + 1];
      if (next && next.indent > indent) {
        const [v, n] = block(lines, i + 1, next.indent);
        out.push(v);
        i = n;
      } else {
        out.push(null);
        i++;
      }
      continue;
    }
    if (isSeqItem(rest)) bail(); // `- - x`
    if (keyEnd(rest) >= 0) {
      // `- key: value` opens a mapping whose keys sit at the column of `key`.
      const [v, n] = mapping(lines, i, indent + offset, rest);
      out.push(v);
      i = n;
      continue;
    }
    const next = lines[i + 1];
    if (next && next.indent > indent) bail(); // a scalar continued on the next line
    out.push(scalar(rest));
    i++;
  }
  return [out, i];
}

/**
 * A block mapping whose keys sit at `indent`; its first line's text is `firstText` (for a mapping
 * that starts after `- `, the line's text without the dash).
 */
function mapping(lines: readonly Line[], i: number, indent: number, firstText: string): [object, number] {
  const out: Record<string, unknown> = {};
  let text = firstText;
  for (;;) {
    const end = keyEnd(text);
    if (end < 0) bail();
    const key = mappingKey(text.slice(0, end));
    if (Object.hasOwn(out, key)) bail(); // a duplicate key: the library reports it
    const rest = text.slice(end + 1).trimStart();
    i++;
    const next = lines[i];
    let value: unknown;
    if (rest !== '') {
      if (next && next.indent > indent) bail(); // a scalar continued on the next line
      value = scalar(rest);
    } else if (next && next.indent > indent) {
      [value, i] = block(lines, i, next.indent);
    } else if (next && next.indent === indent && isSeqItem(next.text)) {
      [value, i] = sequence(lines, i, indent); // `key:` then `- item` at the key's own column
    } else value = null;
    define(out, key, value);
    const after = lines[i];
    if (!after || after.indent !== indent || isSeqItem(after.text)) break;
    text = after.text;
  }
  const after = lines[i];
  if (after && after.indent > indent) bail();
  return [out, i];
}

/** As the library builds a map: a `__proto__` key is data, not the prototype. */
function define(o: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
  else o[key] = value;
}

/** Where the `:` ending a mapping key is (followed by a space or the end), or -1. */
function keyEnd(text: string): number {
  const c = text[0];
  if (c === '"' || c === "'") {
    const close = closingQuote(text, c);
    if (close < 0) return -1;
    return text[close + 1] === ':' && (close + 2 === text.length || text[close + 2] === ' ') ? close + 1 : -1;
  }
  for (let at = text.indexOf(':'); at >= 0; at = text.indexOf(':', at + 1))
    if (at + 1 === text.length || text[at + 1] === ' ') return at;
  return -1;
}

function mappingKey(raw: string): string {
  const key = raw.trimEnd();
  const c = key[0];
  if (c === '"' || c === "'") return quoted(key);
  // A plain key the core schema reads as something else (true, 8080, null, a merge key): not here.
  if (key === '<<' || SPECIAL_START.test(key) || typeof plain(key) !== 'string') bail();
  return key;
}

/** Characters that start YAML syntax rather than a plain scalar. */
const SPECIAL_START = /^(?:[[\]{},#&*!|>%@`'"]|[?:-](?: |$))/;

function scalar(text: string): unknown {
  const c = text[0];
  if (c === '"' || c === "'") return ownCopy(quoted(text));
  if (c === '[' || c === '{') return flow(text);
  if (SPECIAL_START.test(text)) bail();
  return ownValue(plain(text));
}

/**
 * A string value, not as a view of the file's text: V8 makes a substring of 13 characters or more
 * a view of its parent (a sliced string), so one kept value would keep the whole file alive (34 MB
 * at 10k services: pod addresses, names and hosts held the text through the compile, until the
 * snapshot build consumed the endpoints). The slice flattens the concatenation into a string of
 * its own. Keys need no copy: a property key is internalized, which copies it.
 */
const ownCopy = (s: string): string => (s.length < 13 ? s : (' ' + s).slice(1));
const ownValue = (v: unknown): unknown => (typeof v === 'string' ? ownCopy(v) : v);

/** `[]`, `{}`, and a flow list of plain or quoted scalars without nesting. */
function flow(text: string): unknown {
  if (text === '[]') return [];
  if (text === '{}') return {};
  if (text[0] !== '[' || text[text.length - 1] !== ']') bail();
  const inner = text.slice(1, -1);
  if (/["'[\]{}#:]/.test(inner)) bail();
  const items = inner.split(',').map((s) => s.trim());
  if (items[items.length - 1] === '') items.pop(); // a trailing comma
  if (items.some((s) => s === '' || SPECIAL_START.test(s))) bail();
  return items.map((item) => ownValue(plain(item)));
}

function closingQuote(text: string, q: string): number {
  for (let i = 1; i < text.length; i++) {
    const ch = text[i];
    if (q === '"' && ch === '\\') i++;
    else if (ch === q) {
      if (q === "'" && text[i + 1] === "'") i++;
      else return i;
    }
  }
  return -1;
}

const ESCAPES: Readonly<Record<string, string>> = {
  '\\': '\\',
  '"': '"',
  '/': '/',
  n: '\n',
  t: '\t',
  r: '\r',
  '0': '\0',
};

/** A whole quoted scalar (nothing after its closing quote). */
function quoted(text: string): string {
  const q = text[0] as string;
  const close = closingQuote(text, q);
  if (close !== text.length - 1) bail();
  const body = text.slice(1, -1);
  if (q === "'") return body.replaceAll("''", "'");
  if (!body.includes('\\')) return body;
  return body.replace(/\\(u[0-9a-fA-F]{4}|.)/g, (_, e: string) => {
    if (e.length === 5) return String.fromCharCode(parseInt(e.slice(1), 16));
    return ESCAPES[e] ?? bail();
  });
}

const INT = /^(?:0|-?[1-9][0-9]{0,14})$/;
const FLOAT = /^-?(?:0|[1-9][0-9]{0,14})\.[0-9]{1,15}$/;
/** The `yaml` library's core-schema number tests (yaml/dist/schema/core): any other number form is left to it. */
const CORE_NUMBER = [
  /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/,
  /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/,
  /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/,
  /^0o[0-7]+$/,
  /^[-+]?[0-9]+$/,
  /^0x[0-9a-fA-F]+$/,
];

/** A plain scalar as the core schema resolves it. */
function plain(text: string): unknown {
  if (text.includes(': ') || text.endsWith(':') || text.includes(' #')) bail();
  switch (text) {
    case '~':
    case 'null':
    case 'Null':
    case 'NULL':
      return null;
    case 'true':
    case 'True':
    case 'TRUE':
      return true;
    case 'false':
    case 'False':
    case 'FALSE':
      return false;
  }
  if (!mayBeNumber(text.charCodeAt(0))) return text;
  if (INT.test(text) || FLOAT.test(text)) return Number(text);
  for (const re of CORE_NUMBER) if (re.test(text)) bail();
  return text;
}

/** Every core-schema number starts with a digit, a sign or a dot (most names start with a letter). */
function mayBeNumber(c: number): boolean {
  return (c >= 48 && c <= 57) || c === 43 || c === 45 || c === 46;
}

/**
 * Argument parsing on top of Node's util.parseArgs, with usage errors that map to exit code 2.
 * Each command declares one table (`command({...})`): it is both the parseArgs option table and
 * the source of its usage line and `--help` text, so help and parsing cannot drift.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { MeshsnapError } from '../errors.js';
import { isLogLevel, LOG_LEVELS, type LogLevel } from '../log.js';

/** A wrong command line: exit code 2 (main.ts), and a 400 wherever it may reach the API. */
export class UsageError extends MeshsnapError {
  override readonly name = 'UsageError';
  constructor(message: string) {
    super('bad_request', message);
  }
}

type Options = NonNullable<ParseArgsConfig['options']>;

/** One flag: what parseArgs needs, plus its placeholder and a line of help. */
export interface FlagSpec {
  readonly type: 'string' | 'boolean';
  readonly multiple?: boolean;
  readonly short?: string;
  readonly default?: string | boolean;
  /** Placeholder in the usage line, e.g. `DIR` (string flags). */
  readonly value?: string;
  readonly help: string;
  /** Shown without brackets; checked by parseCommand. */
  readonly required?: boolean;
}

export interface CommandSpec<O extends Readonly<Record<string, FlagSpec>> = Readonly<Record<string, FlagSpec>>> {
  readonly name: string;
  readonly summary: string;
  /** Positional arguments as the usage line shows them, e.g. `<file|dir>...`. */
  readonly args?: string;
  readonly positionals?: { readonly min?: number; readonly max?: number };
  readonly options: O;
  readonly examples: readonly string[];
}

export function command<const O extends Readonly<Record<string, FlagSpec>>>(spec: CommandSpec<O>): CommandSpec<O> {
  return spec;
}

export function parse<O extends Options>(
  argv: readonly string[],
  options: O,
  positionals: { min?: number; max?: number } = {},
) {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const n = parsed.positionals.length;
  if (positionals.min !== undefined && n < positionals.min)
    throw new UsageError(`expected at least ${positionals.min} argument(s)`);
  if (positionals.max !== undefined && n > positionals.max)
    throw new UsageError(`expected at most ${positionals.max} argument(s), got ${n}`);
  return parsed;
}

/** Parses argv with the command's table; a missing required flag is a usage error naming it. */
export function parseCommand<const O extends Readonly<Record<string, FlagSpec>>>(
  spec: CommandSpec<O>,
  argv: readonly string[],
) {
  const parsed = parse(argv, spec.options as O & Options, spec.positionals ?? { max: 0 });
  for (const [name, flag] of Object.entries(spec.options)) {
    const v = (parsed.values as Record<string, unknown>)[name];
    if (flag.required && (v === undefined || v === '')) throw new UsageError(`--${name} is required`);
  }
  return parsed;
}

function flagUsage(name: string, flag: FlagSpec): string {
  const text = `--${name}${flag.type === 'string' ? ` ${flag.value ?? 'VALUE'}` : ''}${flag.multiple ? ' ...' : ''}`;
  return flag.required ? text : `[${text}]`;
}

/** `meshsnap <name> <args> [--flag VALUE] ...`, from the table. */
export function usageLine(spec: CommandSpec): string {
  return [
    'meshsnap',
    spec.name,
    ...(spec.args ? [spec.args] : []),
    ...Object.entries(spec.options).map(([n, f]) => flagUsage(n, f)),
  ].join(' ');
}

/** The `--help` text: usage, summary, one line per flag (with its default), examples. */
export function helpText(spec: CommandSpec): string {
  const rows = Object.entries(spec.options).map(([name, f]) => {
    const left = `${f.short ? `-${f.short}, ` : ''}--${name}${f.type === 'string' ? ` ${f.value ?? 'VALUE'}` : ''}`;
    const dflt = f.default !== undefined && f.default !== false ? ` (default: ${String(f.default)})` : '';
    return [left, `${f.help}${dflt}`] as const;
  });
  rows.push(['-h, --help', 'print this help']);
  const width = Math.max(...rows.map(([l]) => l.length));
  return [
    `usage: ${usageLine(spec)}`,
    '',
    spec.summary,
    '',
    'options:',
    ...rows.map(([l, r]) => `  ${l.padEnd(width)}  ${r}`),
    '',
    'examples:',
    ...spec.examples.map((e) => `  ${e}`),
  ].join('\n');
}

/** An integer flag in [min, max]; the message names the flag. */
export function intFlag(name: string, value: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (!/^-?[0-9]+$/.test(value))
    throw new UsageError(`--${name}: not a number: ${JSON.stringify(value)} (a whole number)`);
  const n = Number(value);
  if (n < min || n > max)
    throw new UsageError(`--${name}: ${n} is out of range ${min}..${max === Number.MAX_SAFE_INTEGER ? '' : max}`);
  return n;
}

/** `latest` (default) or a positive version number. */
export function parseVersionArg(value: string | undefined): number | 'latest' {
  if (value === undefined || value === 'latest') return 'latest';
  if (!/^[1-9][0-9]*$/.test(value))
    throw new UsageError(`not a version: ${JSON.stringify(value)} (use a number or "latest")`);
  return Number(value);
}

/** `--log-level` of the long-running commands (relay, watch, serve). */
export const logLevelOption = {
  'log-level': {
    type: 'string',
    default: 'info',
    value: 'LEVEL',
    help: 'the lowest level logged: debug, info, warn or error',
  },
} as const satisfies Record<string, FlagSpec>;

export function parseLogLevel(value: string): LogLevel {
  if (!isLogLevel(value))
    throw new UsageError(`--log-level: not a level: ${JSON.stringify(value)} (use ${LOG_LEVELS.join(', ')})`);
  return value;
}

export const storeOptions = {
  store: {
    type: 'string',
    value: 'DIR|URL',
    help: 'the store: a folder, file://… or s3://bucket/prefix (default: $MESHSNAP_STORE, else ./.meshsnap)',
  },
  channel: { type: 'string', default: 'main', value: 'NAME', help: 'the channel' },
} as const satisfies Record<string, FlagSpec>;

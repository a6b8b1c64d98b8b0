/** Argument parsing on top of Node's util.parseArgs, with usage errors that map to exit code 2. */
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

export function parse<O extends Options>(argv: readonly string[], options: O, positionals: { min?: number; max?: number } = {}) {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const n = parsed.positionals.length;
  if (positionals.min !== undefined && n < positionals.min) throw new UsageError(`expected at least ${positionals.min} argument(s)`);
  if (positionals.max !== undefined && n > positionals.max) throw new UsageError(`expected at most ${positionals.max} argument(s), got ${n}`);
  return parsed;
}

/** `latest` (default) or a positive version number. */
export function parseVersionArg(value: string | undefined): number | 'latest' {
  if (value === undefined || value === 'latest') return 'latest';
  if (!/^[1-9][0-9]*$/.test(value)) throw new UsageError(`not a version: ${JSON.stringify(value)} (use a number or "latest")`);
  return Number(value);
}

/** `--log-level` of the long-running commands (relay, watch, serve). */
export const logLevelOption = { 'log-level': { type: 'string', default: 'info' } } as const;

export function parseLogLevel(value: string): LogLevel {
  if (!isLogLevel(value)) throw new UsageError(`--log-level: not a level: ${JSON.stringify(value)} (use ${LOG_LEVELS.join(', ')})`);
  return value;
}

export const storeOptions = {
  store: { type: 'string' },
  channel: { type: 'string', default: 'main' },
} as const;

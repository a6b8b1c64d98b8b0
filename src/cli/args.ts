/** Argument parsing on top of Node's util.parseArgs, with usage errors that map to exit code 2. */
import { parseArgs, type ParseArgsConfig } from 'node:util';

export class UsageError extends Error {
  override readonly name = 'UsageError';
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

export const storeOptions = {
  store: { type: 'string' },
  channel: { type: 'string', default: 'main' },
} as const;

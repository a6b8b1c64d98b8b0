/**
 * One log shape for every process and function: JSON lines on stderr,
 *
 *     {"time":"2026-11-24T09:30:00.000Z","level":"info","event":"relay.listening","message":"…",…fields}
 *
 * `event` is a short stable dotted name (what happened, for machines); `message` is optional
 * human text; the other fields follow. One line per event class (a switch, a NACK, a failure),
 * never one per resource. Imports nothing: the Node processes, workerd and Lambda all use it.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

export const isLogLevel = (value: string): value is LogLevel => (LOG_LEVELS as readonly string[]).includes(value);

export type LogFields = Readonly<Record<string, unknown>>;

export interface Logger {
  log(level: LogLevel, event: string, fields?: LogFields): void;
  debug(event: string, fields?: LogFields): void;
  info(event: string, fields?: LogFields): void;
  warn(event: string, fields?: LogFields): void;
  error(event: string, fields?: LogFields): void;
}

export interface LoggerOptions {
  /** Lines below this level are dropped (default `info`). */
  readonly level?: LogLevel;
  /** Where a finished line (with its newline) goes; default stderr (console.error without a process). */
  readonly write?: (line: string) => void;
  readonly clock?: () => Date;
}

const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };
const RESERVED = new Set(['time', 'level', 'event']);

/** The message of anything thrown. */
export const errorMessage = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** One line: the fixed fields first, then the caller's (an Error value becomes its message). */
export function formatLine(time: Date, level: LogLevel, event: string, fields: LogFields = {}): string {
  const { message, ...rest } = fields;
  const line: Record<string, unknown> = { time: time.toISOString(), level, event };
  if (message !== undefined) line.message = typeof message === 'string' ? message : errorMessage(message);
  for (const [k, v] of Object.entries(rest)) if (!RESERVED.has(k)) line[k] = v instanceof Error ? errorMessage(v) : v;
  return `${JSON.stringify(line)}\n`;
}

type Stderr = { write(s: string): unknown };

function defaultWrite(): (line: string) => void {
  const stderr = (globalThis as { process?: { stderr?: Stderr } }).process?.stderr;
  if (stderr && typeof stderr.write === 'function') return (line) => void stderr.write(line);
  return (line) => console.error(line.trimEnd());
}

export function createLogger(opts: LoggerOptions = {}): Logger {
  const min = RANK[opts.level ?? 'info'];
  const write = opts.write ?? defaultWrite();
  const clock = opts.clock ?? (() => new Date());
  const log = (level: LogLevel, event: string, fields?: LogFields): void => {
    if (RANK[level] >= min) write(formatLine(clock(), level, event, fields));
  };
  return {
    log,
    debug: (event, fields) => log('debug', event, fields),
    info: (event, fields) => log('info', event, fields),
    warn: (event, fields) => log('warn', event, fields),
    error: (event, fields) => log('error', event, fields),
  };
}

const ignore = (): void => undefined;
export const silentLogger: Logger = { log: ignore, debug: ignore, info: ignore, warn: ignore, error: ignore };

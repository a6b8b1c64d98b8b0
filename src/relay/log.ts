/**
 * Relay logs: one JSON line per event (`{"t":…,"level":…,"event":"snapshot.switch",…}`), one
 * line per event class (a switch, a NACK, a store error), never one per resource.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface RelayLogger {
  log(level: LogLevel, event: string, fields?: Readonly<Record<string, unknown>>): void;
}

const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };

/** JSON lines to a writable (stderr by default); `min` drops quieter levels. */
export function jsonLogger(out: { write(s: string): unknown } = process.stderr, min: LogLevel = 'info'): RelayLogger {
  return {
    log(level, event, fields = {}) {
      if (RANK[level] < RANK[min]) return;
      out.write(`${JSON.stringify({ t: new Date().toISOString(), level, event, ...fields })}\n`);
    },
  };
}

export const silentLogger: RelayLogger = { log() {} };

/** The message of anything thrown. */
export const errorMessage = (e: unknown): string => (e instanceof Error ? e.message : String(e));

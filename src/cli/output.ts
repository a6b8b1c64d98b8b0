/** Output conventions: machine-readable JSON lines on stdout, human notes on stderr. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

/** C0 and C1 control characters but tab and newline: what makes a terminal run an escape sequence. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * Text made safe for a terminal: control characters (an object name carrying `ESC[2J`, say) are
 * shown escaped as `\xNN` instead of being run. Every human line the CLI prints goes through here.
 */
export const terminalSafe = (text: string): string =>
  text.replace(CONTROL, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);

export function note(text: string): void {
  process.stderr.write(`${terminalSafe(text)}\n`);
}

/** A human line on stdout (text formats of audit, diff, demo). */
export function printText(text: string): void {
  process.stdout.write(`${terminalSafe(text)}\n`);
}

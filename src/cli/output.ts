/** Output conventions: machine-readable JSON lines on stdout, human notes on stderr. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

export function note(text: string): void {
  process.stderr.write(`${text}\n`);
}

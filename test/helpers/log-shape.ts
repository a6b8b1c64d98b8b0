/** The one log shape (src/log.ts) every process writes on stderr, checked line by line. */
import assert from 'node:assert/strict';

const EVENT_RE = /^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$/;

/** Every non-empty line is a JSON object with `time` (ISO), `level`, a dotted `event`, and `message` only as text. */
export function assertLogLines(stderr: string): Record<string, unknown>[] {
  const lines = stderr.split('\n').filter((l) => l.trim() !== '');
  assert.ok(lines.length > 0, 'no log lines');
  return lines.map((text) => {
    let line: Record<string, unknown>;
    try {
      line = JSON.parse(text) as Record<string, unknown>;
    } catch {
      assert.fail(`not a JSON log line: ${text}`);
    }
    assert.deepEqual(Object.keys(line).slice(0, 3), ['time', 'level', 'event'], text);
    assert.equal(new Date(line.time as string).toISOString(), line.time, text);
    assert.ok(['debug', 'info', 'warn', 'error'].includes(line.level as string), text);
    assert.match(line.event as string, EVENT_RE, text);
    if ('message' in line) assert.equal(typeof line.message, 'string', text);
    return line;
  });
}

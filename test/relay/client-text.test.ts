/** Client text on its way to logs and the audit: control characters escaped, length bounded. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clip, escapeControls, forLog } from '../../src/relay/client-text.js';
import { createLogger } from '../../src/log.js';

test('escapeControls: C0, DEL, C1, line separators and bidi overrides become \\u escapes; the rest is kept', () => {
  assert.equal(
    escapeControls('a\u001b[31mred\u0007\nb\u007f\u0085\u2028\u202e~é'),
    'a\\u001b[31mred\\u0007\\u000ab\\u007f\\u0085\\u2028\\u202e~é',
  );
  assert.equal(
    escapeControls('sidecar~10.0.0.1~p.default~default.svc.cluster.local'),
    'sidecar~10.0.0.1~p.default~default.svc.cluster.local',
  );
});

test('clip: at most max characters, and says how long the text was', () => {
  assert.deepEqual(clip('abc', 3), { text: 'abc', truncated: false });
  const c = clip('x'.repeat(1000), 10);
  assert.equal(c.truncated, true);
  assert.equal(c.text, `${'x'.repeat(10)}…[truncated by the relay: 1000 chars sent]`);
});

test('a node id with escape sequences reaches stderr as printable text only', () => {
  let out = '';
  const log = createLogger({ write: (s: string) => (out += s) });
  log.log('warn', 'xds.nack', { node: forLog(`evil\u001b]0;owned\u0007\u009b2J${'y'.repeat(5000)}`) });
  assert.equal(out.split('\n').length, 2, 'one line');
  // eslint-disable-next-line no-control-regex
  assert.doesNotMatch(out.slice(0, -1), /[\u0000-\u001f\u007f-\u009f]/, 'no raw control character');
  assert.ok(out.length < 600, `bounded: ${out.length}`);
  assert.match(out, /truncated by the relay: 5017 chars sent/);
});

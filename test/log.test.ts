/** The one log shape (src/log.ts): field order, the level filter, errors as messages, no sentences as events. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UsageError, parseLogLevel } from '../src/cli/args.js';
import { createLogger, formatLine, silentLogger } from '../src/log.js';
import { assertLogLines } from './helpers/log-shape.js';

const at = new Date('2030-01-01T00:00:00.000Z');

test('a line: time, level, event, message, then the fields; reserved names cannot be overwritten', () => {
  const line = formatLine(at, 'warn', 'relay.nack', {
    message: 'a proxy refused a config',
    node: 'n1',
    time: 'x',
    level: 'y',
    event: 'z',
    error: new Error('bad cluster'),
  });
  assert.equal(
    line,
    '{"time":"2030-01-01T00:00:00.000Z","level":"warn","event":"relay.nack","message":"a proxy refused a config","node":"n1","error":"bad cluster"}\n',
  );
  assertLogLines(line);
});

test('the level filter drops quieter lines; debug shows everything; silent writes nothing', () => {
  const out: string[] = [];
  const write = (l: string) => void out.push(l);
  const info = createLogger({ write, clock: () => at });
  info.debug('x.debug');
  info.info('x.info');
  info.warn('x.warn');
  info.log('error', 'x.error', { n: 1 });
  assert.deepEqual(
    out.map((l) => (JSON.parse(l) as { event: string }).event),
    ['x.info', 'x.warn', 'x.error'],
  );
  out.length = 0;
  const error = createLogger({ write, level: 'error' });
  error.warn('x.warn');
  error.error('x.error');
  assert.equal(out.length, 1);
  out.length = 0;
  const debug = createLogger({ write, level: 'debug' });
  debug.debug('x.debug');
  assert.equal(out.length, 1);
  assertLogLines(out.join(''));
  silentLogger.error('x.error');
});

test('--log-level takes debug, info, warn, error; anything else is a usage error', () => {
  for (const l of ['debug', 'info', 'warn', 'error'] as const) assert.equal(parseLogLevel(l), l);
  for (const bad of ['warning', 'INFO', '']) assert.throws(() => parseLogLevel(bad), UsageError);
});

/** The Worker cron's retention settings from its vars, and the cron run itself over a local store. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cronGc } from '../../functions/cloudflare/cron-gc.js';
import { ConfigError } from '../../functions/shared/env.js';
import { freshenAfterMsFromEnv, gcSettingsFromEnv } from '../../functions/shared/gc-env.js';
import { createLogger } from '../../src/log.js';
import { compileAndPublish, STATE, tempStore } from '../history/helpers.js';

test('gc settings from vars: defaults, strings and numbers, bad values are ConfigErrors', () => {
  assert.deepEqual(gcSettingsFromEnv({}), { keep: 10, graceMinutes: 60, dryRun: false });
  assert.deepEqual(
    gcSettingsFromEnv({ MESHSNAP_GC_KEEP: '3', MESHSNAP_GC_KEEP_DAYS: '7.5', MESHSNAP_GC_GRACE_MINUTES: '' }),
    { keep: 3, keepDays: 7.5, graceMinutes: 60, dryRun: false },
  );
  assert.deepEqual(
    gcSettingsFromEnv({ MESHSNAP_GC_KEEP: 5, MESHSNAP_GC_GRACE_MINUTES: 15 }),
    { keep: 5, graceMinutes: 15, dryRun: false },
    'wrangler.toml numbers',
  );
  for (const [name, value] of [
    ['MESHSNAP_GC_KEEP', '0'],
    ['MESHSNAP_GC_KEEP', '2.5'],
    ['MESHSNAP_GC_KEEP', 'ten'],
    ['MESHSNAP_GC_KEEP_DAYS', '-1'],
    ['MESHSNAP_GC_GRACE_MINUTES', '1e3'],
    ['MESHSNAP_GC_GRACE_MINUTES', true],
  ] as const) {
    assert.throws(
      () => gcSettingsFromEnv({ [name]: value }),
      (e: Error) => e instanceof ConfigError && e.message.startsWith(name),
      `${name}=${String(value)}`,
    );
  }
  assert.equal(freshenAfterMsFromEnv({}), undefined);
  assert.equal(freshenAfterMsFromEnv({ MESHSNAP_FRESHEN_MINUTES: '0' }), 0);
  assert.equal(freshenAfterMsFromEnv({ MESHSNAP_FRESHEN_MINUTES: '2.5' }), 150_000);
  assert.throws(() => freshenAfterMsFromEnv({ MESHSNAP_FRESHEN_MINUTES: 'soon' }), ConfigError);
});

test(
  'the cron run: a bad var logs gc.failed and deletes nothing; a good one runs gc as actor cron',
  { timeout: 60_000 },
  async () => {
    const { store, cleanup } = tempStore();
    try {
      for (const vs of [
        'virtual-service-reviews-v3.yaml',
        'virtual-service-reviews-50-v3.yaml',
        'virtual-service-reviews-80-20.yaml',
      ])
        await compileAndPublish(store, STATE, [vs]);
      const lines: [string, Record<string, unknown>][] = [];
      const at = new Date('2030-01-01T00:00:00.000Z');
      const log = createLogger({
        clock: () => at,
        write: (line) =>
          void lines.push([
            String((JSON.parse(line) as { level: string }).level),
            JSON.parse(line) as Record<string, unknown>,
          ]),
      });
      const later = () => new Date(Date.now() + 2 * 3_600_000);
      const event = { cron: '23 3 * * *' };

      await assert.rejects(
        cronGc(event, { env: { MESHSNAP_GC_KEEP: 'x' }, store: () => store, log, now: later }),
        ConfigError,
      );
      assert.equal(lines.length, 1);
      assert.equal(lines[0]?.[0], 'error');
      assert.deepEqual(lines[0]?.[1], {
        time: '2030-01-01T00:00:00.000Z',
        level: 'error',
        event: 'gc.failed',
        cron: '23 3 * * *',
        error: 'MESHSNAP_GC_KEEP must be a whole number ≥ 1, not "x"',
      });
      assert.deepEqual(await store.listVersions('main'), [3, 2, 1]);

      const result = await cronGc(event, { env: { MESHSNAP_GC_KEEP: '1' }, store: () => store, log, now: later });
      assert.deepEqual(result.deletedVersions, { main: [2, 1] });
      assert.ok(result.deletedObjects > 0);
      assert.deepEqual(await store.listVersions('main'), [3]);
      assert.equal(lines[1]?.[0], 'info');
      assert.equal(lines[1]?.[1].event, 'gc.done');
      assert.deepEqual(lines[1]?.[1].deletedVersions, { main: [2, 1] });
      const audit = [];
      for await (const a of store.readAudit({})) audit.push(a);
      const gcRecord = audit.find((a) => a.kind === 'gc');
      assert.equal(gcRecord?.actor, 'cron');
      assert.equal(gcRecord?.reason, 'scheduled gc (cron "23 3 * * *")');
      assert.equal(gcRecord?.channel, 'main');
    } finally {
      cleanup();
    }
  },
);

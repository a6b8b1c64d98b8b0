/**
 * The audit page in a real headless Chromium over the in-process API: the timeline, a diff
 * (reviews-v3 → reviews-50-v3 shows the weight change), a keyboard-only rollback through the
 * confirmation dialog, per-proxy status and the audit log. Screenshots go to test-artifacts/ui/.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { REPO } from '../helpers/paths.js';
import { chromiumMissing, launchChromium } from './browser.js';
import { REVISIONS, reviews8020, startUiServer, TOKEN, type UiServer } from './fixture.js';

// Callbacks passed to page.evaluate run in the browser; the project's types are Node's (no DOM lib).
declare const document: {
  readonly activeElement: { readonly id: string; readonly textContent: string | null } | null;
  querySelector(selector: string): { getAttribute(name: string): string | null } | null;
};
declare const sessionStorage: { getItem(key: string): string | null };
const isOpen = (d: unknown) => (d as { open: boolean }).open;

const ARTIFACTS = join(REPO, 'test-artifacts', 'ui');
const skip = chromiumMissing();
if (skip) console.warn(`# skipping the browser tests: ${skip}`);

let server: UiServer;
let browser: Browser;
let page: Page;
const problems: string[] = [];

before(async () => {
  if (skip) return;
  mkdirSync(ARTIFACTS, { recursive: true });
  server = await startUiServer();
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1366, height: 768 } });
  page.setDefaultTimeout(15_000);
  // Any script error or CSP violation is a failure of the page.
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
});

after(async () => {
  await browser?.close();
  await server?.close();
});

const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`) });
const versions = () => page.$$eval('#timeline tbody tr', (rows) => rows.map((r) => r.getAttribute('data-version')));

test(
  'the timeline lists the versions newest first with who, why, status and counts',
  { skip: skip ?? false, timeout: 60_000 },
  async () => {
    await page.goto(server.url);
    await page.waitForSelector('body[data-ready="1"]');
    assert.deepEqual(await versions(), ['3', '2', '1']);
    const top = page.locator('#timeline tbody tr').first();
    const text = await top.innerText();
    assert.match(text, /v3/);
    assert.match(text, /current/);
    assert.match(text, /ops/, 'who: the token name');
    assert.match(text, /canary: 50% of reviews to v3/, 'why: the compile reason');
    assert.match(text, /compile/);
    assert.match(text, /clusters/);
    assert.equal(await page.locator('#current-version').innerText(), 'v3');
    // Which objects changed: the inputs diff from the parent, loaded when opened.
    await top.locator('details:has(summary:text("objects changed"))').locator('summary').click();
    await page.waitForSelector('#timeline tbody tr:first-child li.chg-changed');
    const changes = await top.locator('details:has(summary:text("objects changed")) ul').innerText();
    assert.match(changes, /~ VirtualService (default\/)?reviews \[config\]/);
    await shot('1-timeline');
    assert.deepEqual(problems, []);
  },
);

test(
  'a diff of reviews-v3 → reviews-50-v3 shows the weight change side by side',
  { skip: skip ?? false, timeout: 60_000 },
  async () => {
    await page.click('#views a[data-view="diff"]');
    await page.selectOption('#diff-from', '2');
    await page.selectOption('#diff-to', '3');
    await page.click('#diff-form button[type="submit"]');
    await page.waitForSelector('#diff-out .group');
    const out = await page.locator('#diff-out').innerText();
    assert.match(out, /v2/);
    assert.match(out, /v3/);
    assert.match(out, /VirtualService (default\/)?reviews/, 'the input object that changed');
    assert.match(out, /weight/, 'the field-level route change');
    assert.match(out, /outbound\|9080\|v1\|reviews\.default\.svc\.cluster\.local/);
    assert.match(page.url(), /#\/diff\?ch=main&from=2&to=3/, 'the diff is linkable');
    await shot('2-diff');
    assert.deepEqual(problems, []);
  },
);

test(
  'a diff accepts rev:PREFIX, typed or chosen from the list, and names it',
  { skip: skip ?? false, timeout: 60_000 },
  async () => {
    await page.click('#views a[data-view="diff"]');
    // Chosen: each compiled revision is listed as rev:PREFIX.
    const listed = await page.$$eval('#diff-to option', (os) => os.map((o) => o.getAttribute('value')));
    assert.ok(listed.includes(`rev:${REVISIONS[3].slice(0, 12)}`), listed.join());
    await page.selectOption('#diff-to', `rev:${REVISIONS[3].slice(0, 12)}`);
    // Typed: a 7-digit prefix of version 2's revision.
    const typed = `rev:${REVISIONS[2].slice(0, 7)}`;
    await page.fill('#diff-from-typed', typed);
    await page.click('#diff-form button[type="submit"]');
    await page.waitForSelector('#diff-out .group');
    const head = await page.locator('#diff-out .diff-head').innerText();
    assert.match(head, new RegExp(`v2 \\(${typed}\\).*→ v3 \\(rev:${REVISIONS[3].slice(0, 12)}\\)`), head);
    assert.match(await page.locator('#diff-out').innerText(), /weight/, 'the same diff as v2 → v3');
    assert.ok(page.url().includes(`from=${encodeURIComponent(typed)}`), page.url());
    assert.equal(await page.inputValue('#diff-from'), typed, 'the typed selector is shown as chosen');
    assert.equal(await page.inputValue('#diff-from-typed'), '');
    assert.deepEqual(problems, []);
    // A prefix no version was compiled from is the API's answer, shown as an error.
    await page.fill('#diff-from-typed', 'rev:0123456');
    await page.click('#diff-form button[type="submit"]');
    await page.waitForSelector('#diff-out .error');
    assert.match(await page.locator('#diff-out .error').innerText(), /not_found/);
    await shot('2b-diff-rev');
    // Back to v2 → v3, where the next test starts.
    await page.selectOption('#diff-from', '2');
    await page.selectOption('#diff-to', '3');
    await page.click('#diff-form button[type="submit"]');
    await page.waitForFunction(() =>
      (globalThis as unknown as { location: { hash: string } }).location.hash.includes('from=2&to=3'),
    );
    await page.waitForSelector('#diff-out .group');
    // The browser logs the 404 as a failed resource load; nothing else may be logged.
    const others = problems.filter((p) => !/status of 404/.test(p));
    assert.deepEqual(others, []);
    problems.length = 0;
  },
);

test(
  'a diff only for one node takes its metadata too, which picks its class (not sidecar/<ns>/_)',
  { skip: skip ?? false, timeout: 60_000 },
  async () => {
    await page.fill('#diff-node', 'sidecar~10.244.0.11~productpage-v1-1.default~default.svc.cluster.local');
    await page.fill('#diff-metadata', '{"NAMESPACE":"default","LABELS":{"app":"productpage","version":"v1"}}');
    // The previous test's diff is still shown, and the new one renders after the hash change: clear
    // it, so the wait below can only be met by this diff's output.
    await page.evaluate(() =>
      (globalThis as unknown as { document: { getElementById(id: string): { replaceChildren(): void } } }).document
        .getElementById('diff-out')
        .replaceChildren(),
    );
    await page.click('#diff-form button[type="submit"]');
    await page.waitForFunction(() =>
      (globalThis as unknown as { location: { hash: string } }).location.hash.includes('metadata='),
    );
    await page.waitForSelector('#diff-out .group');
    const out = await page.locator('#diff-out').innerText();
    assert.match(out, /sidecar\/default\/[^\s_]*productpage/);
    assert.doesNotMatch(out, /sidecar\/default\/_/);
    assert.match(page.url(), /&node=sidecar.*&metadata=%7B/, 'linkable with its metadata');
    // A side without the field is blank: not shaded as the column's values are.
    const shades = await page.evaluate(() => {
      const d = (
        globalThis as unknown as {
          document: {
            createElement(t: string): { className: string; appendChild(c: unknown): unknown; remove(): void };
            body: { appendChild(c: unknown): unknown };
          };
        }
      ).document;
      const table = d.createElement('table');
      table.className = 'fields';
      const cells = ['from', 'empty'].map((c) => {
        const td = d.createElement('td');
        td.className = c;
        table.appendChild(td);
        return td;
      });
      d.body.appendChild(table);
      const bg = cells.map(
        (td) =>
          (globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } }).getComputedStyle(td)
            .backgroundColor,
      );
      table.remove();
      return bg;
    });
    assert.notEqual(shades[0], 'rgba(0, 0, 0, 0)');
    assert.equal(shades[1], 'rgba(0, 0, 0, 0)');
    await page.fill('#diff-node', '');
    await page.fill('#diff-metadata', '');
    assert.deepEqual(problems, []);
  },
);

test('Escape cancels a rollback: nothing is published', { skip: skip ?? false, timeout: 60_000 }, async () => {
  await page.click('#views a[data-view="timeline"]');
  await page.click('#timeline tr[data-version="1"] button:text("Roll back")');
  assert.equal(await page.locator('#confirm').evaluate(isOpen), true);
  assert.equal(
    await page.evaluate(() => document.activeElement?.id),
    'confirm-reason',
    'the reason field has the focus',
  );
  await page.keyboard.press('Escape');
  assert.equal(await page.locator('#confirm').evaluate(isOpen), false);
  assert.deepEqual(await versions(), ['3', '2', '1']);
});

test(
  'keyboard only: roll back to v2 with the confirmation; v4 appears on top and is current',
  { skip: skip ?? false, timeout: 60_000 },
  async () => {
    await page.goto(server.url + '#/timeline');
    await page.waitForSelector('body[data-ready="1"]');
    // Tab through the page until the "Roll back to v2" button has the focus.
    let found = false;
    for (let i = 0; i < 120 && !found; i++) {
      await page.keyboard.press('Tab');
      found = await page.evaluate(() => document.activeElement?.textContent?.startsWith('Roll back to v2') ?? false);
    }
    assert.ok(found, 'the rollback button is reachable with Tab');
    await shot('3-focus-rollback');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#confirm[open]');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'confirm-reason');
    // The reason is required: Enter without one keeps the dialog open and says why.
    await page.keyboard.press('Enter');
    assert.match(await page.locator('#confirm-error').innerText(), /reason/i);
    await page.keyboard.type('reviews canary misbehaves: back to all-v3');
    await page.keyboard.press('Tab');
    assert.equal(
      await page.evaluate(() => document.activeElement?.id),
      'confirm-token',
      'no token yet: the dialog asks for it',
    );
    await page.keyboard.type(TOKEN);
    await shot('4-confirm');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => !document.querySelector('#confirm[open]'));
    await page.waitForFunction(
      () => document.querySelector('#timeline tbody tr')?.getAttribute('data-version') === '4',
    );
    assert.deepEqual(await versions(), ['4', '3', '2', '1']);
    const top = await page.locator('#timeline tbody tr').first().innerText();
    assert.match(top, /current/);
    assert.match(top, /rollback to v2/);
    assert.match(top, /reviews canary misbehaves/);
    assert.match(top, /ops/);
    assert.match(await page.locator('#notice').innerText(), /now serving v4/);
    assert.equal(await page.locator('#current-version').innerText(), 'v4');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'row-4', 'the focus lands on the new version');
    assert.equal(await page.evaluate(() => sessionStorage.getItem('meshsnap.token')), TOKEN);
    await shot('5-after-rollback');
    // The served config is v2's again: the diff v2 → v4 has no resource change for the routes.
    const res = await server.app.request('/api/v1/channels/main/diff?from=2&to=4&type=routes');
    const body = (await res.json()) as { diff: { classes: unknown[] } };
    assert.deepEqual(body.diff.classes, []);
    assert.deepEqual(problems, []);
  },
);

test(
  'unpin and pin again from the channel bar, with the token already kept',
  { skip: skip ?? false, timeout: 60_000 },
  async () => {
    // A rollback pins the channel (so the watcher does not roll the config forward again).
    await page.waitForSelector('#chan-state .b-pinned');
    await page.click('#chan-state button:text("Unpin")');
    await page.waitForSelector('#confirm[open]');
    assert.equal(await page.locator('#confirm-token-row').isHidden(), true, 'the token is not asked again');
    await page.click('#confirm-ok'); // the reason is optional for an unpin
    await page.waitForFunction(() => !document.querySelector('#chan-state .b-pinned'));
    await page.click('#chan-state button:text("Pin v4")');
    await page.waitForSelector('#confirm[open]');
    await page.fill('#confirm-reason', 'freeze during the release');
    await page.click('#confirm-ok');
    await page.waitForSelector('#chan-state .b-pinned');
    assert.match(await page.locator('#chan-state').innerText(), /pinned at v4 by ops — freeze during the release/);
    assert.match(await page.locator('#timeline tbody tr').first().innerText(), /pinned/);
    assert.deepEqual(problems, []);
  },
);

test(
  'a compile while pinned is a candidate; promoting it serves it as v5',
  { skip: skip ?? false, timeout: 60_000 },
  async () => {
    const res = await server.app.request('/api/v1/channels/main/compile', {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ files: reviews8020(), reason: 'try 80/20' }),
    });
    assert.equal(((await res.json()) as { status: string }).status, 'candidate');
    await page.goto(server.url + '#/timeline');
    await page.reload(); // a hash-only goto would not reload the page
    await page.waitForSelector('#candidates tbody tr');
    // (The candidate record does not carry the compile's actor/reason yet: the API's pinned publish path drops them.)
    assert.match(await page.locator('#candidates').innerText(), /candidate:1[\s\S]*candidate[\s\S]*Promote/);
    await shot('6-candidate');
    await page.click('#candidates button:text("Promote")');
    await page.waitForSelector('#confirm[open]');
    await page.fill('#confirm-reason', '80/20 looks good');
    await page.keyboard.press('Enter');
    await page.waitForFunction(
      () => document.querySelector('#timeline tbody tr')?.getAttribute('data-version') === '5',
    );
    const top = await page.locator('#timeline tbody tr').first().innerText();
    assert.match(top, /promote candidate:1/);
    assert.match(top, /80\/20 looks good/);
    assert.match(top, /current/);
    assert.deepEqual(problems, []);
  },
);

test(
  'proxies: ACKed versions per type and the NACK with its error',
  { skip: skip ?? false, timeout: 60_000 },
  async () => {
    await page.click('#views a[data-view="proxies"]');
    await page.waitForSelector('#proxies-out tbody tr');
    const text = await page.locator('#proxies-out').innerText();
    assert.match(text, /productpage-v1-1/);
    assert.match(text, /Cluster: v3/);
    assert.match(text, /Proto constraint validation failed: route: value is required/);
    // Connected or not is what the relays recorded, with the time.
    const row = (node: string) => page.locator(`#proxies-out tr[data-node*="${node}"] td.state`).innerText();
    assert.match(await row('productpage-v1-1'), /^connected\s+since 2026-05-04 09:10/);
    assert.match(await row('reviews-v1-1'), /^disconnected\s+at 2026-05-04 09:14/);
    await shot('7-proxies');
  },
);

test('the audit log names who did what and why', { skip: skip ?? false, timeout: 60_000 }, async () => {
  await page.click('#views a[data-view="audit"]');
  await page.waitForSelector('#audit-out tbody tr');
  const text = await page.locator('#audit-out').innerText();
  assert.match(text, /rollback/);
  assert.match(text, /freeze during the release/);
  assert.match(text, /NACK/);
  assert.match(text, /disconnect/);
  // productpage ACKed CDS and RDS of v3: one row for the push.
  const acks = await page
    .locator('#audit-out tbody tr', { hasText: 'productpage-v1-1' })
    .filter({ hasText: 'ACK' })
    .allInnerTexts();
  assert.equal(acks.filter((t) => /\bACK\b/.test(t) && !/NACK/.test(t)).length, 1, acks.join('\n'));
  assert.match(acks.find((t) => /\bACK\b/.test(t)) ?? '', /Cluster, RouteConfiguration/);
  await shot('8-audit');
  assert.deepEqual(problems, []);
});

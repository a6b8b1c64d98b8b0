/**
 * The audit page's explain panel in headless Chromium over the UI fixture's history (1: bookinfo
 * with subsets, 2: reviews → v3, 3: reviews 50/50 v1/v3): a request from productpage's pod, typed
 * in the form, shows the route, the weighted clusters and the VirtualService behind them; a range
 * (across) shows in which version the answer changed. Screenshots go to test-artifacts/ui/.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { REPO } from '../helpers/paths.js';
import { chromiumMissing, launchChromium } from './browser.js';
import { startUiServer, type UiServer } from './fixture.js';

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
  page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
  page.setDefaultTimeout(15_000);
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
});

after(async () => {
  await browser?.close();
  await server?.close();
});

const POD = 'default/productpage-v1-5f6d7c8b9-abcde';

test(
  'explain: a request typed in the form shows listener, route, weighted clusters and the VirtualService',
  { skip: skip ?? false, timeout: 60_000 },
  async () => {
    await page.goto(server.url);
    await page.waitForSelector('body[data-ready="1"]');
    await page.click('#views a[data-view="explain"]');
    await page.waitForSelector('#view-explain:not([hidden])');
    await page.selectOption('#ex-version', '3');
    await page.fill('#ex-pod', POD);
    await page.fill('#ex-to', 'reviews:9080');
    await page.fill('#ex-path', '/reviews/0');
    await page.click('#explain-form button[type="submit"]');
    await page.waitForSelector('#explain-summary');
    assert.match(await page.locator('#explain-summary').innerText(), /routed/);
    const step = (name: string) => page.locator(`#explain-out tr[data-step="${name}"]`);
    assert.match(await step('Listener').innerText(), /0\.0\.0\.0_9080[\s\S]*virtualOutbound/);
    assert.match(await step('Virtual host').innerText(), /reviews\.default\.svc\.cluster\.local:9080/);
    assert.match(await step('Route').innerText(), /VirtualService default\/reviews/);
    const clusters = await step('Cluster').allInnerTexts();
    assert.equal(clusters.length, 2);
    assert.match(clusters[0] ?? '', /outbound\|9080\|v1\|reviews\.default\.svc\.cluster\.local · 50%/);
    assert.match(
      clusters[1] ?? '',
      /outbound\|9080\|v3\|reviews\.default\.svc\.cluster\.local · 50%[\s\S]*10\.244\.0\.15:9080/,
    );
    // The question is in the URL: it can be linked, and Back works.
    assert.match(page.url(), /#\/explain\?.*pod=default%2Fproductpage/);
    await page.screenshot({ path: join(ARTIFACTS, 'explain-1-request.png') });

    // A host no route config knows under ALLOW_ANY: the catch-all, passthrough.
    await page.fill('#ex-to', 'www.example.com:80');
    await page.click('#explain-form button[type="submit"]');
    await page.locator('#explain-summary', { hasText: 'passthrough' }).waitFor();
    assert.match(await step('Virtual host').innerText(), /allow_any/);

    assert.deepEqual(problems, []);

    // A bad question is shown as the API's error, not a broken page (the browser logs the 400 it got).
    await page.fill('#ex-to', 'reviews');
    await page.click('#explain-form button[type="submit"]');
    await page.waitForSelector('#explain-out .error');
    assert.match(await page.locator('#explain-out .error').innerText(), /bad_request: to: "reviews" is not host:port/);
    assert.deepEqual(problems, [
      'console: Failed to load resource: the server responded with a status of 400 (Bad Request)',
    ]);
    problems.length = 0;
  },
);

test(
  'explain across 1..3: per version the answer, and where it changed',
  { skip: skip ?? false, timeout: 60_000 },
  async () => {
    await page.goto(`${server.url}#/explain?ch=main&pod=${encodeURIComponent(POD)}&to=reviews:9080&across=1..3`);
    await page.waitForSelector('#explain-changes');
    const rows = await page.$$eval('#explain-out tbody tr', (trs) => trs.map((r) => r.getAttribute('data-version')));
    assert.deepEqual(rows, ['1', '2', '3']);
    const changes = await page.locator('#explain-changes > li').allInnerTexts();
    assert.equal(changes.length, 2);
    assert.match(
      changes[0] ?? '',
      /^v1 → v2:[\s\S]*clusters outbound\|9080\|\|reviews\.default\.svc\.cluster\.local 100% → outbound\|9080\|v3\|reviews/,
    );
    assert.match(changes[1] ?? '', /^v2 → v3:[\s\S]*v1\|reviews\.default\.svc\.cluster\.local 50%/);
    // The form shows the question it answered.
    assert.equal(await page.inputValue('#ex-across'), '1..3');
    assert.equal(await page.inputValue('#ex-pod'), POD);
    await page.screenshot({ path: join(ARTIFACTS, 'explain-2-across.png') });
    assert.deepEqual(problems, []);
  },
);

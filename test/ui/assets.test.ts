/** The page's assets as served by the app: content types, a strict CSP, a script that parses, nothing external. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Script } from 'node:vm';
import { Hono } from 'hono';
import { mountUi, UI_CSP } from '../../src/api/ui/mount.js';

const app = new Hono();
mountUi(app);

test('/, /ui/app.css and /ui/app.js are served with their types and the CSP', async () => {
  for (const [path, type] of [
    ['/', 'text/html'],
    ['/ui/app.css', 'text/css'],
    ['/ui/app.js', 'text/javascript'],
  ] as const) {
    const res = await app.request(path);
    assert.equal(res.status, 200, path);
    assert.match(res.headers.get('content-type') ?? '', new RegExp(`^${type}`), path);
    assert.equal(res.headers.get('content-security-policy'), UI_CSP, path);
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    const body = await res.text();
    // Offline and private: no CDN, no web font, no absolute URL the page would fetch.
    assert.doesNotMatch(body, /(src|href)="(https?:)?\/\//, path);
    assert.doesNotMatch(body, /@import|url\(\s*['"]?https?:/, path);
  }
});

test('the script parses as a classic script and never writes HTML from data', async () => {
  const js = await (await app.request('/ui/app.js')).text();
  assert.doesNotThrow(() => new Script(js, { filename: 'app.js' }));
  assert.doesNotMatch(js, /innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/);
});

test('the page uses relative URLs only (it may live under a path prefix)', async () => {
  const html = await (await app.request('/')).text();
  assert.match(html, /src="ui\/app\.js"/);
  assert.match(html, /href="ui\/app\.css"/);
  const js = await (await app.request('/ui/app.js')).text();
  assert.match(js, /fetch\('api\/v1\/'/);
  assert.doesNotMatch(js, /fetch\('\//);
});

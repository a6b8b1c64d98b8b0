/**
 * Serves the audit page from the API app itself: `/` (the HTML shell), `/ui/app.css` and
 * `/ui/app.js`. The assets are TS string modules, so the app stays pure (no node:fs, no bundler
 * loader) and the same page ships in Node, workerd and Lambda.
 *
 *     const app = createApp({ store, auth });
 *     mountUi(app);
 *
 * Every URL the page uses is relative (`ui/app.js`, `api/v1/...`), so it also works under a path
 * prefix such as an API Gateway stage (`/prod/`).
 */
import type { Hono } from 'hono';
import { APP_JS } from './client/index.js';
import { APP_CSS } from './page-css.js';
import { PAGE_HTML } from './page-html.js';

/**
 * The page loads nothing from elsewhere and builds its DOM without innerHTML, so a strict policy
 * costs nothing and keeps an injected script from reading the token kept in sessionStorage.
 */
export const UI_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; form-action 'none'; base-uri 'none'; frame-ancestors 'none'";

const common = {
  'Content-Security-Policy': UI_CSP,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  // Small and served from memory: revalidate rather than risk a stale script after an upgrade.
  'Cache-Control': 'no-cache',
};

// Hono<any>: the UI does not care about the API app's context variables.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function mountUi(app: Hono<any>): void {
  app.get('/', (c) => c.body(PAGE_HTML, 200, { ...common, 'Content-Type': 'text/html; charset=utf-8' }));
  app.get('/ui/app.css', (c) => c.body(APP_CSS, 200, { ...common, 'Content-Type': 'text/css; charset=utf-8' }));
  app.get('/ui/app.js', (c) => c.body(APP_JS, 200, { ...common, 'Content-Type': 'text/javascript; charset=utf-8' }));
}

/**
 * The audit page's script: the client parts joined into one classic script (one request, no module
 * loader), wrapped in a function so nothing leaks into the page's globals.
 */
import { ACTIONS_JS } from './actions.js';
import { CORE_JS } from './core.js';
import { DIFF_JS } from './diff.js';
import { EXPLAIN_JS } from './explain.js';
import { PROXIES_JS } from './proxies.js';
import { ROUTER_JS } from './router.js';
import { TIMELINE_JS } from './timeline.js';

export const APP_JS = [
  '(function () {',
  "'use strict';",
  CORE_JS,
  TIMELINE_JS,
  DIFF_JS,
  PROXIES_JS,
  EXPLAIN_JS,
  ACTIONS_JS,
  ROUTER_JS,
  '})();',
  '',
].join('\n');

/**
 * Client script, part 6: views by URL hash (`#/timeline`, `#/diff?from=3&to=4`, `#/explain?…`, `#/proxies`,
 * `#/audit`, each may carry `ch=`), so a diff can be linked and Back works; the channel picker;
 * and start-up.
 */
export const ROUTER_JS = String.raw`
var VIEWS = ['timeline', 'diff', 'explain', 'proxies', 'audit'];

function parseHash() {
  var raw = location.hash.replace(/^#\/?/, '');
  var q = raw.indexOf('?');
  var view = (q < 0 ? raw : raw.slice(0, q)) || 'timeline';
  return { view: VIEWS.indexOf(view) < 0 ? 'timeline' : view, params: new URLSearchParams(q < 0 ? '' : raw.slice(q + 1)) };
}

async function route() {
  var r = parseHash();
  state.view = r.view;
  state.params = r.params;
  var ch = r.params.get('ch');
  if (ch && ch !== state.channel && state.channels.some(function (c) { return c.name === ch; })) {
    state.channel = ch;
    $('channel').value = ch;
    await loadChannel();
  }
  VIEWS.forEach(function (v) { $('view-' + v).hidden = v !== r.view; });
  Array.prototype.forEach.call(document.querySelectorAll('#views a'), function (a) {
    if (a.dataset.view === r.view) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  });
  if (!state.channel) return;
  if (r.view === 'diff') {
    fillDiffSelects();
    var node = r.params.get('node') || '';
    var metadata = r.params.get('metadata') || '';
    $('diff-node').value = node;
    $('diff-metadata').value = metadata;
    if (r.params.get('from') && r.params.get('to')) await showDiff(r.params.get('from'), r.params.get('to'), node, metadata);
  } else if (r.view === 'explain') {
    fillExplainForm(r.params);
    if (r.params.get('to')) await showExplain(r.params);
  } else if (r.view === 'proxies') await loadProxies();
  else if (r.view === 'audit') await loadAudit();
}

async function init() {
  var ls = await api('GET', 'channels');
  state.channels = ls.channels;
  var fromHash = parseHash().params.get('ch');
  var def = ls.channels.filter(function (c) { return c.default; })[0];
  var pick = ls.channels.some(function (c) { return c.name === fromHash; }) ? fromHash : def ? def.name : ls.channels.length ? ls.channels[0].name : null;
  state.channel = pick;
  fillChannelPicker();
  if (pick) { $('channel').value = pick; await loadChannel(); }
}

function fillChannelPicker() {
  var sel = $('channel');
  fill(sel, state.channels.map(function (c) { return h('option', { value: c.name }, c.name + (c.current === null ? ' (empty)' : ' · v' + c.current)); }));
  if (state.channel) sel.value = state.channel;
}

async function refreshView() {
  try {
    if (!state.channel) await init(); else await loadChannel();
    clearError();
    await route();
  } catch (e) { showError(e); }
}

function go(hash) {
  // Setting the same hash fires no hashchange: route directly then.
  if (location.hash === hash) route().catch(showError); else location.hash = hash;
}

async function boot() {
  wireDialogs();
  setToken(getToken());
  $('channel').addEventListener('change', function () {
    state.channel = $('channel').value;
    state.fresh = null;
    clearError();
    fill($('notice'));
    loadChannel().then(function () { go('#/' + state.view + '?ch=' + encodeURIComponent(state.channel)); }).catch(showError);
  });
  $('older').addEventListener('click', function () { loadOlder().catch(showError); });
  $('diff-form').addEventListener('submit', function (ev) {
    ev.preventDefault();
    var node = $('diff-node').value.trim();
    var metadata = node ? $('diff-metadata').value.trim() : '';
    // A typed selector wins over the list (the API checks its grammar).
    var from = $('diff-from-typed').value.trim() || $('diff-from').value;
    var to = $('diff-to-typed').value.trim() || $('diff-to').value;
    go('#/diff?ch=' + encodeURIComponent(state.channel) + '&from=' + encodeURIComponent(from) + '&to=' + encodeURIComponent(to) +
      (node ? '&node=' + encodeURIComponent(node) : '') + (metadata ? '&metadata=' + encodeURIComponent(metadata) : ''));
  });
  wireExplain();
  $('proxies-refresh').addEventListener('click', function () { loadProxies(); });
  $('audit-refresh').addEventListener('click', function () { loadAudit(); });
  window.addEventListener('hashchange', function () { route().catch(showError); });
  try { await init(); } catch (e) { showError(e); }
  await route().catch(showError);
  document.body.dataset.ready = '1';
}

boot();
`;

/**
 * Client script, part 1: shared state, the DOM builder, formatting and the API call wrapper.
 *
 * The client parts are plain ES2020 source in strings (served as one script by index.ts). Rules
 * that keep them safe and correct: no template literals (the strings are template literals
 * themselves), and data goes into the DOM only as text (h() / textContent), never as HTML.
 */
export const CORE_JS = String.raw`
var TOKEN_KEY = 'meshsnap.token';
var state = {
  channel: null,
  channels: [],
  status: null,
  snapshots: [],
  candidates: [],
  nextCursor: null,
  view: 'timeline',
  params: new URLSearchParams(),
  fresh: null
};

function $(id) { return document.getElementById(id); }

/** h('td', { class: 'x', onclick: fn }, child, 'text', [more]) */
function h(tag, attrs) {
  var el = document.createElement(tag);
  if (attrs) {
    Object.keys(attrs).forEach(function (k) {
      var v = attrs[k];
      if (v === null || v === undefined || v === false) return;
      if (k === 'class') el.className = v;
      else if (k === 'text') el.textContent = String(v);
      else if (k.slice(0, 2) === 'on') el.addEventListener(k.slice(2), v);
      else if (v === true) el.setAttribute(k, '');
      else el.setAttribute(k, String(v));
    });
  }
  for (var i = 2; i < arguments.length; i++) add(el, arguments[i]);
  return el;
}
function add(el, c) {
  if (c === null || c === undefined || c === false) return;
  if (Array.isArray(c)) { c.forEach(function (x) { add(el, x); }); return; }
  el.appendChild(typeof c === 'object' ? c : document.createTextNode(String(c)));
}
function clear(el) { while (el.firstChild) el.removeChild(el.firstChild); return el; }
function fill(el) { clear(el); for (var i = 1; i < arguments.length; i++) add(el, arguments[i]); return el; }

function plural(n, word, many) { return n + ' ' + (n === 1 ? word : (many || word + 's')); }
function shortDigest(d) { return d ? String(d).replace(/^sha256:/, '').slice(0, 12) : ''; }
function fmtTime(iso) {
  if (!iso) return '—';
  var d = new Date(iso);
  if (isNaN(d.getTime())) return String(iso);
  return d.toISOString().slice(0, 19).replace('T', ' ') + ' UTC';
}
function ago(iso) {
  var s = Math.round((Date.now() - new Date(iso).getTime()) / 1000);
  if (!isFinite(s)) return '';
  if (s < 60) return 'just now';
  if (s < 3600) return Math.floor(s / 60) + ' min ago';
  if (s < 86400) return Math.floor(s / 3600) + ' h ago';
  return Math.floor(s / 86400) + ' d ago';
}
function timeCell(iso) {
  return h('td', { class: 'nowrap' }, h('time', { datetime: iso, title: ago(iso) }, fmtTime(iso)));
}
function jsonText(v) { return v === undefined ? '—' : JSON.stringify(v); }
function typeName(url) { return String(url || '').split('.').pop() || '—'; }
function badge(kind, text, title) { return h('span', { class: 'badge b-' + kind, title: title }, text); }
function versionName(label) { return /^[0-9]+$/.test(String(label)) ? 'v' + label : String(label); }
function objName(o) { return o.kind + ' ' + (o.namespace ? o.namespace + '/' : '') + o.name; }
function table(headers, rows, caption) {
  return h('table', null,
    caption ? h('caption', { class: 'sr-only' }, caption) : null,
    h('thead', null, h('tr', null, headers.map(function (t) { return h('th', { scope: 'col' }, t); }))),
    h('tbody', null, rows));
}

function getToken() { try { return sessionStorage.getItem(TOKEN_KEY) || ''; } catch (e) { return ''; } }
function setToken(t) {
  try { if (t) sessionStorage.setItem(TOKEN_KEY, t); else sessionStorage.removeItem(TOKEN_KEY); } catch (e) { /* storage disabled: keep nothing */ }
  $('token-btn').textContent = t ? 'Token set ✓' : 'Set token';
}

function ApiFailure(code, message, status, diagnostics) {
  var e = new Error(message);
  e.code = code; e.status = status; e.diagnostics = diagnostics || [];
  return e;
}

/** Calls api/v1/<path> (relative: the page may live under a path prefix). Throws ApiFailure. */
async function api(method, path, body) {
  var headers = { Accept: 'application/json' };
  var t = getToken();
  if (t) headers.Authorization = 'Bearer ' + t;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  var res;
  try {
    res = await fetch('api/v1/' + path, { method: method, headers: headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store' });
  } catch (e) {
    throw ApiFailure('network', 'cannot reach the API: ' + e.message, 0);
  }
  var data = null;
  try { data = await res.json(); } catch (e) { data = null; }
  if (!res.ok) {
    var err = (data && data.error) || {};
    throw ApiFailure(err.code || 'http_' + res.status, err.message || res.statusText || ('HTTP ' + res.status), res.status, err.diagnostics);
  }
  return data;
}
function chPath(rest) { return 'channels/' + encodeURIComponent(state.channel) + rest; }

function showError(e) {
  var el = $('alert');
  var msg = e && e.message ? e.message : String(e);
  if (e && e.status === 401) msg += ' — set a token (button at the top right).';
  fill(el, (e && e.code ? e.code + ': ' : '') + msg);
  el.hidden = false;
}
function clearError() { $('alert').hidden = true; clear($('alert')); }
function notify(text) { fill($('notice'), text); }
`;

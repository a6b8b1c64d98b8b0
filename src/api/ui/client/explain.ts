/**
 * Client script, part 5: the explain view. Pick a version (or a range, "across"), a proxy (a pod of
 * the stored inputs, or a node id and metadata) and a request (to host:port, path, method, headers,
 * TLS, inbound); shows where it goes — listener, filter chain, HTTP filters, route config, virtual
 * host, routes skipped and matched, clusters with weights and endpoints — each with its reasons and
 * the Istio objects behind it (GET …/snapshots/:v/explain). The form is kept in the URL hash.
 */
export const EXPLAIN_JS = String.raw`
var EXPLAIN_FIELDS = ['v', 'pod', 'node', 'metadata', 'to', 'path', 'method', 'header', 'tls', 'inbound', 'across'];

function fillExplainForm(params) {
  var sel = $('ex-version');
  var opts = versionOptions();
  var want = params.get('v') || 'latest';
  fill(sel, h('option', { value: 'latest' }, 'latest'), opts.map(function (o) { return h('option', { value: o.value }, o.text); }));
  if (!Array.prototype.some.call(sel.options, function (o) { return o.value === want; })) add(sel, h('option', { value: want }, want));
  sel.value = want;
  ['pod', 'node', 'metadata', 'to', 'path', 'method', 'across'].forEach(function (k) { $('ex-' + k).value = params.get(k) || ''; });
  $('ex-headers').value = params.getAll('header').join('\n');
  $('ex-tls').checked = params.get('tls') === 'true';
  $('ex-inbound').checked = params.get('inbound') === 'true';
}

/** The form as URL parameters (what the hash carries and the API takes, but v). */
function explainParams() {
  var p = new URLSearchParams();
  p.set('ch', state.channel);
  p.set('v', $('ex-version').value || 'latest');
  ['pod', 'node', 'metadata', 'to', 'path', 'method', 'across'].forEach(function (k) {
    var v = $('ex-' + k).value.trim();
    if (v) p.set(k, v);
  });
  $('ex-headers').value.split('\n').map(function (l) { return l.trim(); }).filter(Boolean).forEach(function (l) { p.append('header', l); });
  if ($('ex-tls').checked) p.set('tls', 'true');
  if ($('ex-inbound').checked) p.set('inbound', 'true');
  return p;
}

async function showExplain(params) {
  var out = $('explain-out');
  var q = new URLSearchParams();
  params.forEach(function (value, key) { if (EXPLAIN_FIELDS.indexOf(key) > 0) q.append(key, value); });
  fill(out, h('p', { class: 'muted' }, 'Explaining…'));
  try {
    var r = await api('GET', chPath('/snapshots/' + encodeURIComponent(params.get('v') || 'latest') + '/explain?' + q.toString()));
    if (r.versions) renderAcross(out, r); else renderExplanation(out, r);
  } catch (e) {
    fill(out, h('p', { class: 'error', role: 'alert' }, e.code + ': ' + e.message));
  }
}

function objList(list) {
  if (!list || list.length === 0) return h('span', { class: 'muted' }, '—');
  return h('ul', { class: 'names' }, list.map(function (p) { return h('li', null, h('code', null, objName(p))); }));
}

function whyList(lines) {
  return lines && lines.length ? h('ul', { class: 'why-list' }, lines.map(function (l) { return h('li', null, l); })) : null;
}

function stepRow(step, name, why, objects) {
  return h('tr', { 'data-step': step },
    h('th', { scope: 'row' }, step),
    h('td', null, name === null ? h('span', { class: 'muted' }, '—') : h('code', null, name), whyList(why)),
    h('td', null, objList(objects)));
}

function renderExplanation(out, r) {
  var rows = [];
  if (r.listener) rows.push(stepRow('Listener', r.listener.name, r.listener.why, []));
  if (r.filterChain) {
    var fc = r.filterChain;
    rows.push(stepRow('Filter chain', (fc.isDefault ? 'default_filter_chain ' : '#' + fc.index + ' ') + (fc.name || ''),
      [JSON.stringify(fc.match)].concat(fc.why), fc.provenance));
  }
  if (r.httpFilters) rows.push(stepRow('HTTP filters', r.httpFilters.map(function (f) { return f.name; }).join(', ') || 'none',
    r.httpFilters.filter(function (f) { return f.detail || f.perRoute; }).map(function (f) {
      return f.name + ': ' + [f.detail, f.perRoute ? 'on this route: ' + f.perRoute : ''].filter(Boolean).join('; ');
    }), []));
  if (r.routeConfig) rows.push(stepRow('Route config', r.routeConfig.name + ' (' + r.routeConfig.source + ')', [], []));
  if (r.virtualHost) rows.push(stepRow('Virtual host', r.virtualHost.name, [r.virtualHost.why], r.virtualHost.provenance));
  (r.skippedRoutes || []).forEach(function (s) { rows.push(stepRow('Skipped route', s.name || '#' + s.index, [s.reason], [])); });
  if (r.route) rows.push(stepRow('Route', (r.route.name || '#' + r.route.index) + ' (' + r.route.action + ')', r.route.why, r.route.provenance));
  r.clusters.forEach(function (c) {
    var eps = c.endpoints.map(function (p) { return p.address + (p.port !== undefined ? ':' + p.port : '') + (p.locality ? ' ' + p.locality : '') + (p.health ? ' ' + p.health : ''); });
    rows.push(stepRow('Cluster', c.name + ' · ' + c.weight + '%' + (c.found ? '' : ' (not served)'), eps.length ? eps : ['no endpoints'], c.provenance));
  });
  var kind = r.outcome === 'routed' || r.outcome === 'tcp_proxy' ? 'current' : r.outcome === 'passthrough' ? 'origin' : 'error';
  fill(out,
    h('p', { id: 'explain-summary', class: 'summary' }, badge(kind, r.outcome + (r.status !== undefined ? ' ' + r.status : '')), ' ', r.summary),
    h('p', { class: 'muted' }, versionName(r.version) + ' · node ', h('code', null, r.node.id), ' · class ', h('code', null, r.node.class)),
    table(['Step', 'What and why', 'Istio objects'], rows, 'Explanation'),
    r.notes.length ? h('ul', { class: 'notes' }, r.notes.map(function (n) { return h('li', { class: 'muted' }, n); })) : null);
}

function renderAcross(out, r) {
  var rows = r.versions.map(function (v) {
    return h('tr', { 'data-version': v.version },
      h('th', { scope: 'row' }, versionName(v.version)),
      h('td', null, h('code', { title: v.digest }, shortDigest(v.digest))),
      h('td', null, v.summary));
  });
  var changes = r.changes.map(function (c) {
    return h('li', { 'data-from': c.from, 'data-to': c.to }, versionName(c.from) + ' → ' + versionName(c.to) + ': ',
      h('ul', null, Object.keys(c.parts).map(function (k) {
        return h('li', null, h('strong', null, k), ' ', c.parts[k].before, ' → ', c.parts[k].after);
      })));
  });
  fill(out,
    table(['Version', 'Answer', 'Summary'], rows, 'Answers per version'),
    h('h3', null, 'Changes'),
    changes.length ? h('ul', { id: 'explain-changes' }, changes) : h('p', { id: 'explain-changes', class: 'muted' }, 'The answer is the same in every version.'));
}

function wireExplain() {
  $('explain-form').addEventListener('submit', function (ev) {
    ev.preventDefault();
    go('#/explain?' + explainParams().toString());
  });
}
`;

/**
 * Client script, part 2: the channel state bar (current, pin, tags) and the timeline of
 * snapshots, newest first, with lazily loaded diagnostics and changed objects.
 */
export const TIMELINE_JS = String.raw`
async function loadChannel() {
  var ch = state.channel;
  var page = await api('GET', chPath('/snapshots?limit=50'));
  var ls = await api('GET', 'channels');
  if (ch !== state.channel) return;
  state.channels = ls.channels;
  state.status = ls.channels.filter(function (c) { return c.name === ch; })[0] || null;
  state.snapshots = page.snapshots;
  state.candidates = page.candidates || [];
  state.nextCursor = page.nextCursor;
  fillChannelPicker();
  renderChannelState();
  renderTimeline();
  fillDiffSelects();
}

async function loadOlder() {
  var page = await api('GET', chPath('/snapshots?limit=50&cursor=' + encodeURIComponent(state.nextCursor)));
  state.snapshots = state.snapshots.concat(page.snapshots);
  state.nextCursor = page.nextCursor;
  renderTimeline();
  fillDiffSelects();
}

function renderChannelState() {
  var s = state.status;
  var el = $('chan-state');
  if (!s) { fill(el, h('span', { class: 'muted' }, 'No versions in this channel yet.')); return; }
  var tags = Object.keys(s.tags || {}).sort();
  fill(el,
    h('span', null, 'Serving ', h('strong', { id: 'current-version' }, s.current === null ? 'nothing' : 'v' + s.current)),
    s.pinned
      ? h('span', null, badge('pinned', 'pinned at v' + s.pinned.version),
          s.pinned.actor ? ' by ' + s.pinned.actor : '', s.pinned.reason ? ' — ' + s.pinned.reason : '', ' ',
          h('button', { type: 'button', class: 'small', onclick: function (ev) { askUnpin(ev.currentTarget); } }, 'Unpin…'))
      : (s.current !== null ? h('button', { type: 'button', class: 'small', onclick: function (ev) { askPin(ev.currentTarget); } }, 'Pin v' + s.current + '…') : null),
    tags.length ? h('span', null, 'Tags: ', tags.map(function (t) { return badge('tag', t + ' → v' + s.tags[t]); })) : null,
    s.candidates && s.candidates.length ? h('span', null, badge('candidate', plural(s.candidates.length, 'candidate'))) : null);
}

function statusBadges(st) {
  var out = [];
  if (st.current) out.push(badge('current', 'current'));
  if (st.candidate) out.push(badge('candidate', 'candidate'));
  if (st.pinned) out.push(badge('pinned', 'pinned'));
  (st.tags || []).forEach(function (t) { out.push(badge('tag', t, 'tag')); });
  return out;
}

function originText(s) {
  if (!s.origin) return 'compile';
  var from = versionName(s.origin.from);
  if (s.origin.kind === 'rollback') return 'rollback to ' + from;
  if (s.origin.kind === 'promote') return 'promote ' + from;
  if (s.origin.kind === 'pinned') return 'endpoints under pin (' + from + ')';
  return s.origin.kind;
}

function countsText(c) {
  if (!c) return '—';
  // Endpoints are LbEndpoints; counts.endpoints is the number of endpoint sets (ClusterLoadAssignments).
  var eps = c.lbEndpoints != null ? plural(c.lbEndpoints, 'endpoint') + ' (' + plural(c.endpoints, 'set') + ')' : plural(c.endpoints, 'endpoint set');
  return [c.clusters + ' clusters · ' + eps, h('br'), c.listeners + ' listeners · ' + c.routes + ' routes', h('br'), plural(c.classes, 'proxy class', 'proxy classes')];
}

function diagCell(s) {
  var d = s.diagnosticCounts || { error: 0, warning: 0, info: 0 };
  var total = (d.error || 0) + (d.warning || 0) + (d.info || 0);
  if (total === 0) return h('td', { class: 'muted' }, 'none');
  var list = h('ul', null, h('li', { class: 'muted' }, 'Loading…'));
  var det = h('details', null,
    h('summary', null,
      d.error ? badge('error', plural(d.error, 'error')) : null,
      d.warning ? badge('warning', plural(d.warning, 'warning')) : null,
      d.info ? badge('info', d.info + ' info') : null),
    list);
  det.addEventListener('toggle', function () {
    if (!det.open || det.dataset.loaded) return;
    det.dataset.loaded = '1';
    api('GET', chPath('/snapshots/' + encodeURIComponent(s.label) + '/diagnostics')).then(function (r) {
      fill(list, r.diagnostics.map(function (g) {
        var where = [g.file, g.kind, g.namespace && g.name ? g.namespace + '/' + g.name : g.name, g.field].filter(Boolean).join(' · ');
        return h('li', null, badge(g.severity, g.severity), h('code', null, g.code), ' ', g.message, where ? h('div', { class: 'muted' }, where) : null);
      }));
    }).catch(function (e) { fill(list, h('li', { class: 'error' }, e.message)); });
  });
  return h('td', null, det);
}

function changeItem(c) {
  var mark = c.change === 'added' ? '+' : (c.change === 'removed' || c.change === 'deleted') ? '−' : '~';
  return h('li', { class: 'chg-' + c.change }, mark + ' ' + objName(c) + (c.layer ? ' [' + c.layer + ']' : '') + (c.manager ? ' by ' + c.manager : ''));
}

/** Which objects changed: the watcher's provenance when recorded, else the inputs diff from the parent. */
function changesCell(s) {
  // A candidate's parent is numbered among candidates: compare it with what is served instead.
  var isCandidate = s.status && s.status.candidate;
  var parentSel = isCandidate ? (state.status && state.status.current) : s.parent;
  var link = parentSel ? h('a', { href: '#/diff?ch=' + encodeURIComponent(state.channel) + '&from=' + parentSel + '&to=' + encodeURIComponent(s.label) }, 'diff v' + parentSel + ' → ' + versionName(s.label)) : null;
  if (s.provenance && s.provenance.changes) {
    var ch = s.provenance.changes;
    return h('td', null, h('details', null, h('summary', null, plural(ch.length + (s.provenance.truncated || 0), 'object') + ' changed'),
      h('ul', null, ch.map(changeItem), s.provenance.truncated ? h('li', { class: 'muted' }, '… and ' + s.provenance.truncated + ' more') : null)), link);
  }
  if (!parentSel) return h('td', { class: 'muted' }, s.parent === null ? 'first version' : '—');
  var list = h('ul', null, h('li', { class: 'muted' }, 'Loading…'));
  var det = h('details', null, h('summary', null, 'objects changed'), list);
  det.addEventListener('toggle', function () {
    if (!det.open || det.dataset.loaded) return;
    det.dataset.loaded = '1';
    api('GET', chPath('/diff?from=' + parentSel + '&to=' + encodeURIComponent(s.label) + '&type=clusters')).then(function (r) {
      var inputs = r.diff.inputs;
      if (!inputs) fill(list, h('li', { class: 'muted' }, 'no stored inputs to compare'));
      else if (inputs.length === 0) fill(list, h('li', { class: 'muted' }, 'no input object changed'));
      else fill(list, inputs.map(changeItem));
    }).catch(function (e) { fill(list, h('li', { class: 'error' }, e.message)); });
  });
  return h('td', null, det, link);
}

function actionsCell(s) {
  var st = s.status || {};
  var buttons = [];
  if (st.candidate) {
    buttons.push(h('button', { type: 'button', onclick: function (ev) { askPromote(s, ev.currentTarget); } }, 'Promote…'));
  } else if (!st.current) {
    buttons.push(h('button', { type: 'button', class: 'danger', onclick: function (ev) { askRollback(s, ev.currentTarget); } }, 'Roll back to v' + s.version + '…'));
  }
  return h('td', { class: 'actions' }, buttons);
}

function snapshotRow(s) {
  var label = versionName(s.label);
  var tr = h('tr', { 'data-version': s.label, class: state.fresh === String(s.label) ? 'fresh' : null },
    h('th', { scope: 'row', tabindex: '-1', id: 'row-' + String(s.label).replace(/[^A-Za-z0-9]/g, '-') },
      h('span', { class: 'ver' }, label), h('br'), h('code', { class: 'muted', title: s.digest }, shortDigest(s.digest))),
    timeCell(s.createdAt),
    h('td', null, s.actor || h('span', { class: 'muted' }, '—')),
    h('td', { class: 'why' }, badge('origin', originText(s)), s.reason ? h('div', null, s.reason) : null,
      s.source ? h('div', { class: 'muted', title: s.source.url || '' }, 'rev ' + String(s.source.revision).slice(0, 12) + (s.source.dirty ? ' (dirty)' : '')) : null),
    h('td', null, statusBadges(s.status || {})),
    h('td', { class: 'muted nowrap' }, countsText(s.counts)),
    diagCell(s),
    changesCell(s),
    actionsCell(s));
  return tr;
}

var TIMELINE_HEADERS = ['Version', 'When (UTC)', 'Who', 'Why', 'Status', 'Resources', 'Diagnostics', 'Changes', 'Actions'];

function renderTimeline() {
  var out = $('timeline');
  if (state.snapshots.length === 0) fill(out, h('p', { class: 'muted' }, 'No versions yet. Compile inputs (POST api/v1/channels/' + state.channel + '/compile) or run the watcher.'));
  else fill(out, table(TIMELINE_HEADERS, state.snapshots.map(snapshotRow), 'Versions of ' + state.channel + ', newest first'));
  var cand = $('candidates');
  if (state.candidates.length === 0) clear(cand);
  else fill(cand, h('h3', null, 'Candidates (recorded while pinned, not served)'), table(TIMELINE_HEADERS, state.candidates.map(snapshotRow), 'Candidates'));
  $('older').hidden = !state.nextCursor;
}
`;

/**
 * Client script, part 3: the diff view. Pick A and B (any versions or candidates, or the GitOps
 * revision a version was compiled from as rev:PREFIX), or type any selector; optionally one
 * node (id and metadata, which decide its class); shows the input objects that changed and, per proxy class and xDS type, the resources added,
 * removed and changed, changed ones as field | A | B rows side by side. Classes with the very same
 * changes are shown once, naming all of them (a route change seen by 12 sidecar classes is one block).
 */
export const DIFF_JS = String.raw`
function versionOptions() {
  var opts = state.snapshots.map(function (s) { return { value: String(s.label), text: 'v' + s.label + (s.status && s.status.current ? ' (current)' : '') + ' · ' + fmtTime(s.createdAt) }; });
  state.candidates.forEach(function (s) { opts.push({ value: String(s.label), text: s.label + ' · ' + fmtTime(s.createdAt) }); });
  // After the versions, so the defaults stay the newest two: each compiled revision as rev:PREFIX.
  state.snapshots.forEach(function (s) {
    var rev = revSelector(s);
    if (rev && !opts.some(function (o) { return o.value === rev; })) opts.push({ value: rev, text: rev + ' → v' + s.label });
  });
  return opts;
}

/** rev:PREFIX (12 hex digits) of the GitOps revision a version was compiled from, if it is a hex commit. */
function revSelector(s) {
  var rev = s.source && String(s.source.revision || '');
  return rev && /^[0-9a-f]{7,64}$/i.test(rev) ? 'rev:' + rev.slice(0, 12).toLowerCase() : '';
}

/** How the diff names a side: the version, and the selector when it was not the version itself. */
function sideName(version, selector) {
  var name = versionName(version);
  return selector && selector !== String(version) && name !== selector ? name + ' (' + selector + ')' : name;
}

function fillDiffSelects() {
  var opts = versionOptions();
  ['diff-from', 'diff-to'].forEach(function (id, i) {
    var sel = $(id);
    var want = state.params.get(i === 0 ? 'from' : 'to') || sel.value;
    fill(sel, opts.map(function (o) { return h('option', { value: o.value }, o.text); }));
    // A typed or linked selector (rev:PREFIX, tag:NAME, …) is shown as chosen, even if not listed.
    if (want && !opts.some(function (o) { return o.value === want; })) add(sel, h('option', { value: want }, want));
    $(id + '-typed').value = '';
    // Defaults: B = newest, A = the one before it.
    if (want) sel.value = want;
    else if (opts.length) sel.value = opts[Math.min(i === 0 ? 1 : 0, opts.length - 1)].value;
  });
}

async function showDiff(from, to, node, metadata) {
  var out = $('diff-out');
  fill(out, h('p', { class: 'muted' }, 'Comparing…'));
  var q = '/diff?from=' + encodeURIComponent(from) + '&to=' + encodeURIComponent(to) + (node ? '&node=' + encodeURIComponent(node) : '') +
    (node && metadata ? '&metadata=' + encodeURIComponent(metadata) : '');
  try {
    var r = await api('GET', chPath(q));
    renderDiff(out, r.diff, from, to);
  } catch (e) {
    fill(out, h('p', { class: 'error', role: 'alert' }, e.code + ': ' + e.message));
  }
}

function fieldsTable(fields, a, b) {
  return h('table', { class: 'fields' },
    h('colgroup', null, h('col', { class: 'path' }), h('col'), h('col')),
    h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Field'), h('th', { scope: 'col' }, 'A: ' + a), h('th', { scope: 'col' }, 'B: ' + b))),
    h('tbody', null, fields.map(function (f) {
      return h('tr', { class: 'chg-' + f.change },
        h('td', null, f.path),
        // A side without the field is blank, not shaded as a value.
        f.change === 'added' ? h('td', { class: 'empty' }, '') : h('td', { class: 'from' }, jsonText(f.from)),
        f.change === 'removed' ? h('td', { class: 'empty' }, '') : h('td', { class: 'to' }, jsonText(f.to)));
    })));
}

// Kinds without a namespace; any other object stored without one was applied to "default" (as in meshsnap diff).
function inputName(i) {
  var clusterScoped = ['Namespace', 'Node', 'MeshConfig', '~'].indexOf(i.kind) >= 0;
  return objName({ kind: i.kind, namespace: i.namespace || (clusterScoped ? '' : 'default'), name: i.name });
}

function className(c) {
  if (c.classA === c.classB || c.classB === undefined) return c.classA + (c.classB === undefined ? ' (gone in B)' : '');
  if (c.classA === undefined) return c.classB + ' (new in B)';
  return c.classA + ' → ' + c.classB;
}

function renderDiff(out, d, from, to) {
  var a = sideName(d.from.version, from), b = sideName(d.to.version, to);
  var inputs = d.inputs;
  var groups = new Map();
  d.classes.forEach(function (c) {
    var key = JSON.stringify(c.types);
    var g = groups.get(key) || { classes: [], types: c.types };
    g.classes.push(className(c));
    groups.set(key, g);
  });
  var parts = [h('p', { class: 'diff-head' },
    h('strong', null, a), ' ', h('code', { class: 'muted' }, shortDigest(d.from.digest)), ' → ',
    h('strong', null, b), ' ', h('code', { class: 'muted' }, shortDigest(d.to.digest)), ': ',
    d.from.digest === d.to.digest ? 'the same snapshot' : plural(d.classes.length, 'proxy class', 'proxy classes') + ' changed',
    inputs ? ', ' + plural(inputs.length, 'input object') + ' changed' : '')];

  parts.push(h('h3', null, 'Input objects'));
  if (!inputs) parts.push(h('p', { class: 'muted' }, 'One of the versions has no stored inputs.'));
  else if (inputs.length === 0) parts.push(h('p', { class: 'muted' }, 'No input object changed.'));
  else inputs.forEach(function (i) {
    parts.push(h('div', { class: 'group' }, h('h3', null, h('span', { class: 'badge b-' + (i.change === 'added' ? 'current' : i.change === 'removed' ? 'error' : 'warning') }, i.change), ' ', inputName(i), h('span', { class: 'muted' }, ' [' + i.layer + ' layer]')),
      i.fields && i.fields.length ? fieldsTable(i.fields, a, b) : null));
  });

  parts.push(h('h3', null, 'Envoy resources'));
  if (groups.size === 0) parts.push(h('p', { class: 'muted' }, 'No resource changed.'));
  groups.forEach(function (g) {
    var body = [h('h3', null, g.classes.length === 1 ? 'Class ' : plural(g.classes.length, 'class', 'classes') + ': ', h('code', null, g.classes.join(', ')))];
    Object.keys(g.types).forEach(function (type) {
      var t = g.types[type];
      body.push(h('h4', null, type));
      if (t.added.length) body.push(h('ul', { class: 'names' }, t.added.map(function (n) { return h('li', { class: 'chg-added' }, '+ added ', h('code', null, n)); })));
      if (t.removed.length) body.push(h('ul', { class: 'names' }, t.removed.map(function (n) { return h('li', { class: 'chg-removed' }, '− removed ', h('code', null, n)); })));
      t.changed.forEach(function (r) {
        body.push(h('div', { class: 'resname' }, '~ ', h('code', null, r.name)));
        body.push(fieldsTable(r.fields, a, b));
      });
    });
    parts.push(h('section', { class: 'group' }, body));
  });
  fill(out, parts);
}
`;

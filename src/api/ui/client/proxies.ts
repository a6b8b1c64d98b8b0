/**
 * Client script, part 4: per-proxy status (from the relays' connect, disconnect and ACK/NACK
 * records) and the audit log, where one proxy's ACKs of one push (one per xDS type) are one row.
 */
export const PROXIES_JS = String.raw`
async function loadProxies() {
  var out = $('proxies-out');
  try {
    var r = await api('GET', 'proxies?channel=' + encodeURIComponent(state.channel));
    if (r.proxies.length === 0) { fill(out, h('p', { class: 'muted' }, 'No relay has reported a proxy on this channel yet.')); return; }
    fill(out, table(['Node', 'Class', 'Relay', 'State', 'ACKed version', 'ACKed per type', 'Last NACK', 'Last seen (UTC)'], r.proxies.map(proxyRow), 'Proxies'));
  } catch (e) { fill(out, h('p', { class: 'error', role: 'alert' }, e.code + ': ' + e.message)); }
}

function proxyRow(p) {
  var acks = Object.keys(p.acked).sort().map(function (url) {
    var a = p.acked[url];
    return h('li', null, typeName(url) + ': v' + a.snapshotVersion, h('span', { class: 'muted' }, ' (' + a.version + ')'));
  });
  var nack = p.lastNack;
  // A NACK older than the last ACK of its type was followed by a good config: it is history.
  var later = nack && p.acked[nack.typeUrl] && p.acked[nack.typeUrl].at > nack.at;
  return h('tr', { 'data-node': p.nodeId },
    h('th', { scope: 'row', class: 'node' }, h('code', null, p.nodeId)),
    h('td', null, h('code', null, p.classId || '—')),
    h('td', { class: 'nowrap' }, p.relay || '—'),
    h('td', { class: 'state' }, connectionState(p)),
    h('td', null, p.ackedVersion === null ? h('span', { class: 'muted' }, 'mixed / none') : h('strong', null, 'v' + p.ackedVersion)),
    h('td', { class: 'nowrap' }, acks.length ? h('ul', { class: 'names' }, acks) : h('span', { class: 'muted' }, 'none')),
    h('td', { class: 'nack' }, nack
      ? [badge(later ? 'warning' : 'error', typeName(nack.typeUrl) + ' v' + nack.snapshotVersion + (later ? ' (since fixed)' : '')), h('div', null, nack.error), h('div', { class: 'muted' }, fmtTime(nack.at))]
      : h('span', { class: 'muted' }, 'none')),
    timeCell(p.lastSeen));
}

function connectionState(p) {
  var since = p.connected ? p.connectedAt : p.disconnectedAt;
  return [p.connected ? badge('current', 'connected') : badge('error', 'disconnected'),
    since ? h('div', { class: 'muted' }, (p.connected ? 'since ' : 'at ') + fmtTime(since)) : null];
}

// One proxy's ACKs of one version from one relay, not separated by another event of that proxy,
// are one push (newest first here, as the API lists them). Same rule as meshsnap audit.
function groupAcks(entries) {
  var out = [], open = new Map();
  entries.forEach(function (e) {
    if (!e.nodeId) { out.push(e); return; }
    var key = (e.relay || '') + ' ' + e.nodeId;
    var g = open.get(key);
    if (e.kind === 'ack' && g && g.version === e.version && g.typeUrls.indexOf(e.typeUrl) < 0) { g.typeUrls.push(e.typeUrl); return; }
    var entry = e.kind === 'ack' ? Object.assign({}, e, { typeUrls: [e.typeUrl] }) : e;
    out.push(entry);
    if (e.kind === 'ack') open.set(key, entry); else open.delete(key);
  });
  return out;
}

async function loadAudit() {
  var out = $('audit-out');
  try {
    var r = await api('GET', 'audit?limit=300&channel=' + encodeURIComponent(state.channel));
    if (r.entries.length === 0) { fill(out, h('p', { class: 'muted' }, 'Nothing recorded yet.')); return; }
    fill(out, table(['When (UTC)', 'Event', 'Version', 'Who', 'Why', 'Proxy / detail'], groupAcks(r.entries).map(auditRow), 'Audit log'),
      r.truncated ? h('p', { class: 'muted' }, 'Showing the newest 300 entries.') : null);
  } catch (e) { fill(out, h('p', { class: 'error', role: 'alert' }, e.code + ': ' + e.message)); }
}

function auditRow(e) {
  var kind = e.kind === 'nack' ? badge('error', 'NACK') : e.kind === 'ack' ? badge('current', 'ACK') : badge('origin', e.kind);
  var detail = [];
  if (e.nodeId) detail.push(h('code', null, e.nodeId));
  if (e.typeUrls) detail.push(' ' + e.typeUrls.map(typeName).sort().join(', '));
  else if (e.typeUrl) detail.push(' ' + typeName(e.typeUrl));
  if (e.error) detail.push(h('div', { class: 'nack' }, e.error));
  if (e.origin) detail.push(h('div', null, originText(e)));
  if (e.detail) detail.push(h('div', { class: 'muted' }, h('code', null, JSON.stringify(e.detail))));
  return h('tr', null,
    timeCell(e.at),
    h('td', null, kind),
    h('td', null, e.version !== undefined && e.version !== '' ? versionName(e.version) : '—'),
    h('td', null, e.actor || '—'),
    h('td', { class: 'why' }, e.reason || ''),
    h('td', null, detail));
}
`;

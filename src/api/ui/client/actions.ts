/**
 * Client script, part 5: the writes (rollback, pin, unpin, promote), each behind a <dialog>
 * confirmation with a reason, and the token dialog. showModal() gives the focus trap and Escape;
 * after a write the timeline reloads and the new version is highlighted and focused.
 */
export const ACTIONS_JS = String.raw`
var pending = null;

/** opts: { title, text, confirm, reasonRequired, run(reason) -> Promise<result>, done(result) } */
function confirmAction(opts) {
  pending = opts;
  $('confirm-title').textContent = opts.title;
  $('confirm-text').textContent = opts.text;
  $('confirm-ok').textContent = opts.confirm;
  $('confirm-ok').disabled = false;
  $('confirm-optional').hidden = !!opts.reasonRequired;
  var reason = $('confirm-reason');
  reason.value = '';
  reason.required = !!opts.reasonRequired;
  $('confirm-token').value = '';
  $('confirm-token-row').hidden = !!getToken();
  fill($('confirm-error'));
  $('confirm').showModal();
  reason.focus();
}

async function submitConfirm(ev) {
  ev.preventDefault();
  var opts = pending;
  if (!opts) return;
  var reason = $('confirm-reason').value.trim();
  if (opts.reasonRequired && !reason) { fill($('confirm-error'), 'Say why: the reason goes into the audit log.'); $('confirm-reason').focus(); return; }
  if (!$('confirm-token-row').hidden) {
    var t = $('confirm-token').value.trim();
    if (!t) { fill($('confirm-error'), 'A bearer token is needed for this.'); $('confirm-token').focus(); return; }
    setToken(t);
  }
  $('confirm-ok').disabled = true;
  fill($('confirm-error'), 'Working…');
  try {
    var result = await opts.run(reason);
    pending = null;
    $('confirm').close();
    clearError();
    await opts.done(result);
  } catch (e) {
    $('confirm-ok').disabled = false;
    fill($('confirm-error'), e.code + ': ' + e.message);
    if (e.status === 401 || e.status === 403) { $('confirm-token-row').hidden = false; $('confirm-token').focus(); }
  }
}

/** Reloads the channel, highlights version v and moves the keyboard focus to its row. */
async function afterWrite(message, v) {
  state.fresh = v === null || v === undefined ? null : String(v);
  await loadChannel();
  notify(message);
  if (state.view !== 'timeline') location.hash = '#/timeline';
  var row = state.fresh && document.getElementById('row-' + state.fresh.replace(/[^A-Za-z0-9]/g, '-'));
  if (row) row.focus();
}

function askRollback(s) {
  var cur = state.status && state.status.current;
  confirmAction({
    title: 'Roll back ' + state.channel + ' to v' + s.version + '?',
    text: 'This publishes a new version with the config of v' + s.version + ' (compiled ' + fmtTime(s.createdAt) + ') and the current endpoints, and pins ' + state.channel + ' to it: later config changes become candidates until you unpin or promote one.' + (cur ? ' v' + cur + ' stays in the history.' : ''),
    confirm: 'Roll back',
    reasonRequired: true,
    run: function (reason) { return api('POST', chPath('/rollback'), { version: String(s.version), reason: reason }); },
    done: function (r) { return afterWrite('Rolled back to v' + s.version + ': now serving v' + r.version + (r.status === 'unchanged' ? ' (unchanged)' : '') + '.', r.version); }
  });
}

function askPromote(s) {
  confirmAction({
    title: 'Promote ' + s.label + '?',
    text: 'This publishes the config recorded as ' + s.label + ' (' + fmtTime(s.createdAt) + ') with the current endpoints, serves it, and keeps ' + state.channel + ' pinned to it.',
    confirm: 'Promote',
    reasonRequired: true,
    run: function (reason) { return api('POST', chPath('/promote'), { version: String(s.label), reason: reason }); },
    done: function (r) { return afterWrite('Promoted ' + s.label + ': now serving v' + r.version + '.', r.version); }
  });
}

function askPin() {
  var cur = state.status && state.status.current;
  confirmAction({
    title: 'Pin ' + state.channel + ' at v' + cur + '?',
    text: 'While pinned, new config is recorded as a candidate and not served; endpoint changes still flow. Unpin or promote a candidate to move on.',
    confirm: 'Pin',
    reasonRequired: true,
    run: function (reason) { return api('POST', chPath('/pin'), { reason: reason }); },
    done: function () { return afterWrite('Pinned ' + state.channel + ' at v' + cur + '.', cur); }
  });
}

function askUnpin() {
  var pin = state.status && state.status.pinned;
  confirmAction({
    title: 'Unpin ' + state.channel + '?',
    text: 'The channel was pinned at v' + (pin ? pin.version : '?') + '. After unpinning, the next compile is served again (candidates stay listed until promoted).',
    confirm: 'Unpin',
    reasonRequired: false,
    run: function (reason) { return api('POST', chPath('/unpin'), reason ? { reason: reason } : {}); },
    done: function () { return afterWrite('Unpinned ' + state.channel + '.', null); }
  });
}

function openTokenDialog() {
  $('token-input').value = '';
  $('token-dialog').showModal();
  $('token-input').focus();
}

function wireDialogs() {
  $('confirm-form').addEventListener('submit', submitConfirm);
  $('confirm-cancel').addEventListener('click', function () { $('confirm').close(); });
  $('confirm-reason').addEventListener('input', function () { fill($('confirm-error')); });
  $('confirm').addEventListener('close', function () { pending = null; });
  $('token-btn').addEventListener('click', openTokenDialog);
  $('token-form').addEventListener('submit', function (ev) {
    ev.preventDefault();
    var t = $('token-input').value.trim();
    if (t) setToken(t);
    $('token-dialog').close();
    if (t) { notify('Token saved for this tab.'); clearError(); refreshView(); }
  });
  $('token-cancel').addEventListener('click', function () { $('token-dialog').close(); });
  $('token-clear').addEventListener('click', function () { setToken(''); $('token-dialog').close(); notify('Token forgotten.'); });
}
`;

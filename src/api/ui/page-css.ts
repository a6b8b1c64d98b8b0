/**
 * The audit page's stylesheet. System fonts only (the page must work offline), sized for a
 * 1366×768 laptop: a compact 14px table layout, and a focus ring that is always visible.
 */
export const APP_CSS = `
:root {
  --fg: #1b1f24; --muted: #57606a; --bg: #fff; --line: #d0d7de; --soft: #f6f8fa;
  --accent: #0b5cad; --ok: #116329; --ok-bg: #dafbe1; --bad: #a40e26; --bad-bg: #ffebe9;
  --warn: #7d4e00; --warn-bg: #fff8c5; --info-bg: #ddf4ff; --pin-bg: #fbefff; --pin: #6e2b9c;
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  color: var(--fg); background: var(--bg);
}
* { box-sizing: border-box; }
/* display rules below (label.block, flex rows) must not undo the hidden attribute. */
[hidden] { display: none !important; }
body { margin: 0; }
code, .mono { font-family: ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12.5px; }
a { color: var(--accent); }
:focus-visible { outline: 3px solid #f59e0b; outline-offset: 2px; border-radius: 2px; }
.skip { position: absolute; left: -9999px; top: 0; background: var(--fg); color: #fff; padding: 6px 10px; z-index: 10; }
.skip:focus { left: 8px; top: 8px; }
.muted { color: var(--muted); }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.error { color: var(--bad); }

.top { display: flex; align-items: center; gap: 18px; padding: 8px 20px; border-bottom: 1px solid var(--line); background: var(--soft); flex-wrap: wrap; }
.top h1 { font-size: 18px; margin: 0; }
.top h1 .sub { font-weight: 400; color: var(--muted); }
.top nav { display: flex; gap: 4px; }
.top nav a { padding: 5px 10px; border-radius: 6px; text-decoration: none; color: var(--fg); }
.top nav a:hover { background: #eaeef2; }
.top nav a[aria-current="page"] { background: var(--accent); color: #fff; }
.top #token-btn { margin-left: auto; }
.chan-state { padding: 6px 20px; border-bottom: 1px solid var(--line); display: flex; gap: 14px; align-items: center; flex-wrap: wrap; min-height: 36px; }
.alert { margin: 8px 20px 0; padding: 8px 12px; border: 1px solid var(--bad); background: var(--bad-bg); color: var(--bad); border-radius: 6px; }
.notice:not(:empty) { margin: 8px 20px 0; padding: 8px 12px; border: 1px solid #4ac26b; background: var(--ok-bg); border-radius: 6px; }
main { padding: 4px 20px 40px; }
main:focus { outline: none; }
h2 { font-size: 16px; margin: 14px 0 8px; display: flex; align-items: center; gap: 10px; }
h3 { font-size: 14px; margin: 16px 0 6px; }
h4 { font-size: 13px; margin: 10px 0 4px; color: var(--muted); text-transform: uppercase; letter-spacing: .03em; }

button, select, input { font: inherit; }
button { padding: 4px 10px; border: 1px solid #8c959f; border-radius: 6px; background: #fff; color: var(--fg); cursor: pointer; }
button:hover { background: #eaeef2; }
button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
button.primary:hover { background: #084a8c; }
button.danger { border-color: var(--bad); color: var(--bad); }
button.small { padding: 1px 8px; font-size: 12.5px; font-weight: 400; }
button:disabled { opacity: .55; cursor: default; }
select, input { padding: 4px 6px; border: 1px solid #8c959f; border-radius: 6px; background: #fff; }

table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; vertical-align: top; padding: 6px 8px; border-bottom: 1px solid var(--line); }
thead th { position: sticky; top: 0; background: var(--soft); font-size: 12.5px; color: var(--muted); font-weight: 600; z-index: 1; }
tbody tr:hover { background: #fafbfc; }
tr.fresh { background: var(--ok-bg) !important; }
th[scope="row"] { white-space: nowrap; }
.ver { font-size: 15px; }
.nowrap { white-space: nowrap; }
.why { max-width: 320px; overflow-wrap: anywhere; }
td.actions { white-space: nowrap; }
td.actions button + button { margin-left: 4px; }

.badge { display: inline-block; padding: 0 7px; border-radius: 10px; font-size: 12px; line-height: 19px; border: 1px solid transparent; margin: 0 3px 3px 0; white-space: nowrap; }
.b-current { background: var(--ok-bg); color: var(--ok); border-color: #4ac26b; }
.b-candidate { background: var(--warn-bg); color: var(--warn); border-color: #d4a72c; }
.b-pinned { background: var(--pin-bg); color: var(--pin); border-color: #c297e0; }
.b-tag { background: var(--info-bg); color: #0a3069; border-color: #54aeff; }
.b-origin { background: var(--soft); color: var(--muted); border-color: var(--line); }
.b-error { background: var(--bad-bg); color: var(--bad); border-color: #ff8182; }
.b-warning { background: var(--warn-bg); color: var(--warn); border-color: #d4a72c; }
.b-info { background: var(--info-bg); color: #0a3069; border-color: #54aeff; }

details > summary { cursor: pointer; white-space: nowrap; }
details ul { margin: 4px 0 0; padding-left: 18px; max-width: 460px; }
details li { margin: 2px 0; overflow-wrap: anywhere; }
.chg-added { color: var(--ok); }
.chg-removed, .chg-deleted { color: var(--bad); }
.chg-changed, .chg-modified { color: var(--warn); }

.diff-form { display: flex; gap: 12px; align-items: end; flex-wrap: wrap; padding: 10px 12px; background: var(--soft); border: 1px solid var(--line); border-radius: 8px; }
.diff-form label { display: flex; flex-direction: column; gap: 2px; font-size: 12.5px; color: var(--muted); }
.diff-form .grow { flex: 1; min-width: 280px; }
.diff-form .selector { width: 13em; }
.diff-head { margin: 12px 0 4px; }
.group { border: 1px solid var(--line); border-radius: 8px; padding: 4px 12px 10px; margin: 10px 0; }
.group > h3 { margin-top: 8px; }
.names { margin: 0; padding-left: 18px; }
.names li { overflow-wrap: anywhere; }
.why-list { margin: 2px 0 0; padding-left: 18px; font-size: 12.5px; color: var(--muted); }
.why-list li { overflow-wrap: anywhere; }
.summary { font-size: 15px; }
#ex-headers { font: inherit; min-height: 2.2em; }
table.fields { table-layout: fixed; margin: 4px 0 8px; }
table.fields td, table.fields th { padding: 3px 8px; font-size: 12.5px; }
table.fields col.path { width: 34%; }
table.fields td { overflow-wrap: anywhere; font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; }
td.from { background: #fff5f5; }
td.to { background: #f3fff5; }
.resname { font-weight: 600; overflow-wrap: anywhere; }
th[scope="row"].node { max-width: 280px; white-space: normal; overflow-wrap: anywhere; }
.nack { color: var(--bad); overflow-wrap: anywhere; max-width: 420px; }

dialog { border: 1px solid var(--line); border-radius: 10px; padding: 0; width: min(520px, 92vw); box-shadow: 0 10px 30px rgba(0,0,0,.25); }
dialog::backdrop { background: rgba(27,31,36,.45); }
dialog form { padding: 14px 18px 16px; }
dialog h2 { margin-top: 0; }
label.block { display: block; margin: 10px 0; }
label.block input { display: block; width: 100%; margin-top: 3px; }
.buttons { display: flex; justify-content: flex-end; gap: 8px; margin-top: 12px; }
`;

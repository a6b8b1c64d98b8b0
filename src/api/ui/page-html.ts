/**
 * The audit page's HTML shell. Plain HTML + CSS + one small vanilla script: no front-end framework,
 * because the page is a few tables, a form and two dialogs, must load instantly from the API app in
 * any runtime, and must work offline (no fonts, no CDN). The script fills the <main> views in.
 *
 * Keyboard: every control is a native link, button, select or input; <dialog>.showModal() traps
 * focus and closes on Escape; a skip link jumps past the header.
 */
export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>meshsnap audit</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="ui/app.css">
<script src="ui/app.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <h1>meshsnap <span class="sub">audit</span></h1>
  <label class="channel">Channel <select id="channel" aria-describedby="chan-state"></select></label>
  <nav aria-label="Views" id="views">
    <a href="#/timeline" data-view="timeline">Timeline</a>
    <a href="#/diff" data-view="diff">Diff</a>
    <a href="#/explain" data-view="explain">Explain</a>
    <a href="#/proxies" data-view="proxies">Proxies</a>
    <a href="#/audit" data-view="audit">Audit log</a>
  </nav>
  <button type="button" id="token-btn">Set token</button>
</header>
<div id="chan-state" class="chan-state" aria-live="polite"></div>
<div id="alert" class="alert" role="alert" hidden></div>
<div id="notice" class="notice" role="status" aria-live="polite"></div>
<main id="main" tabindex="-1">
  <section id="view-timeline" aria-labelledby="h-timeline">
    <h2 id="h-timeline">Timeline</h2>
    <div id="candidates"></div>
    <div id="timeline"><p class="muted">Loading…</p></div>
    <p><button type="button" id="older" hidden>Load older versions</button></p>
  </section>
  <section id="view-diff" aria-labelledby="h-diff" hidden>
    <h2 id="h-diff">Diff</h2>
    <form id="diff-form" class="diff-form">
      <label>From (A) <select id="diff-from" required></select></label>
      <label>or type <input id="diff-from-typed" class="selector" placeholder="rev:3f9c2e1, tag:v1.2, 7" aria-label="From (A): a version selector"></label>
      <label>To (B) <select id="diff-to" required></select></label>
      <label>or type <input id="diff-to-typed" class="selector" placeholder="rev:3f9c2e1, tag:v1.2, 7" aria-label="To (B): a version selector"></label>
      <label class="grow">Only for node <input id="diff-node" placeholder="sidecar~10.0.0.1~pod.ns~ns.svc.cluster.local (optional)"></label>
      <label class="grow">with metadata <input id="diff-metadata" placeholder='{"NAMESPACE":"ns","LABELS":{"app":"web"}} (picks the pod’s class)'></label>
      <button type="submit" class="primary">Compare</button>
    </form>
    <div id="diff-out"></div>
  </section>
  <section id="view-explain" aria-labelledby="h-explain" hidden>
    <h2 id="h-explain">Explain a request</h2>
    <form id="explain-form" class="diff-form">
      <label>Version <select id="ex-version"></select></label>
      <label>or range <input id="ex-across" class="selector" placeholder="10..15 (across)" aria-label="Across versions: FROM..TO"></label>
      <label class="grow">From pod <input id="ex-pod" placeholder="namespace/pod-name (from the stored inputs)"></label>
      <label class="grow">or node <input id="ex-node" placeholder="sidecar~10.0.0.1~pod.ns~ns.svc.cluster.local"></label>
      <label class="grow">with metadata <input id="ex-metadata" placeholder='{"NAMESPACE":"ns","LABELS":{"app":"web"}}'></label>
      <label class="grow">To <input id="ex-to" required placeholder="reviews.default.svc.cluster.local:9080"></label>
      <label>Path <input id="ex-path" placeholder="/"></label>
      <label>Method <input id="ex-method" class="selector" placeholder="GET"></label>
      <label class="grow">Headers <textarea id="ex-headers" rows="2" placeholder="end-user=jason (one per line)"></textarea></label>
      <label><input type="checkbox" id="ex-tls"> TLS</label>
      <label><input type="checkbox" id="ex-inbound"> Inbound</label>
      <button type="submit" class="primary">Explain</button>
    </form>
    <div id="explain-out"></div>
  </section>
  <section id="view-proxies" aria-labelledby="h-proxies" hidden>
    <h2 id="h-proxies">Proxies <button type="button" class="small" id="proxies-refresh">Refresh</button></h2>
    <div id="proxies-out"></div>
  </section>
  <section id="view-audit" aria-labelledby="h-audit" hidden>
    <h2 id="h-audit">Audit log <button type="button" class="small" id="audit-refresh">Refresh</button></h2>
    <div id="audit-out"></div>
  </section>
</main>
<dialog id="confirm" aria-labelledby="confirm-title" aria-describedby="confirm-text">
  <form id="confirm-form" novalidate>
    <h2 id="confirm-title">Confirm</h2>
    <p id="confirm-text"></p>
    <label class="block">Reason <span id="confirm-optional" class="muted">(optional)</span>
      <input id="confirm-reason" autocomplete="off" maxlength="1024"></label>
    <label class="block" id="confirm-token-row">Bearer token (kept for this tab only)
      <input id="confirm-token" type="password" autocomplete="off"></label>
    <p id="confirm-error" class="error" role="alert"></p>
    <div class="buttons">
      <button type="button" id="confirm-cancel">Cancel</button>
      <button type="submit" id="confirm-ok" class="primary">Confirm</button>
    </div>
  </form>
</dialog>
<dialog id="token-dialog" aria-labelledby="token-title">
  <form id="token-form" novalidate>
    <h2 id="token-title">API token</h2>
    <p>Writes (rollback, pin, promote) need the bearer token configured on the server. It is kept in
    this tab's session storage only and sent to this API only.</p>
    <label class="block">Bearer token <input id="token-input" type="password" autocomplete="off"></label>
    <div class="buttons">
      <button type="button" id="token-clear">Forget token</button>
      <button type="button" id="token-cancel">Cancel</button>
      <button type="submit" class="primary">Save</button>
    </div>
  </form>
</dialog>
</body>
</html>
`;

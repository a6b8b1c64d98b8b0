/** The readable form of an explanation (`meshsnap explain --text`). Pure. */
import type { AcrossAnswer } from './across.js';
import { provenanceLabel } from './provenance.js';
import type { Explanation, Provenance } from './types.js';

const from = (p: readonly Provenance[]): string => (p.length ? `  [from ${p.map(provenanceLabel).join(', ')}]` : '');

export function explanationText(e: Explanation): string {
  const r = e.request;
  const mtls = r.tls && r.direction === 'inbound' ? ' over Istio mTLS' : '';
  const request =
    r.protocol === 'tcp'
      ? `${r.direction} tcp ${r.host}:${r.port}${r.tls && r.direction === 'outbound' ? ' over TLS' : ''}${mtls}`
      : `${r.direction} ${r.method} ${r.tls && r.direction === 'outbound' ? 'https' : 'http'}://${r.host}:${r.port}${r.path}${mtls}`;
  const lines: string[] = [request, `=> ${e.summary}`];
  if (e.listener) {
    lines.push(`listener      ${e.listener.name}`);
    for (const w of e.listener.why) lines.push(`                ${w}`);
  }
  if (e.filterChain) {
    const fc = e.filterChain;
    lines.push(
      `filter chain  ${[fc.isDefault ? 'default_filter_chain' : `#${String(fc.index)}`, fc.name ?? ''].join(' ').trim()}${from(fc.provenance)}`,
    );
    for (const w of fc.why) lines.push(`                ${w}`);
  }
  if (e.httpFilters) lines.push(`http filters  ${e.httpFilters.map((f) => f.name).join(', ') || 'none'}`);
  for (const f of e.httpFilters ?? []) {
    if (f.detail) lines.push(`                ${f.name}: ${f.detail}`);
    if (f.perRoute) lines.push(`                ${f.name} on this route: ${f.perRoute}`);
  }
  if (e.routeConfig) lines.push(`route config  ${e.routeConfig.name} (${e.routeConfig.source})`);
  if (e.virtualHost) {
    lines.push(`virtual host  ${e.virtualHost.name}${from(e.virtualHost.provenance)}`);
    lines.push(`                ${e.virtualHost.why}`);
  }
  for (const s of e.skippedRoutes ?? []) lines.push(`skipped route ${s.name ?? `#${s.index}`}: ${s.reason}`);
  if (e.route) {
    lines.push(`route         ${e.route.name ?? `#${e.route.index}`} (${e.route.action})${from(e.route.provenance)}`);
    for (const w of e.route.why) lines.push(`                ${w}`);
  }
  for (const c of e.clusters) {
    lines.push(
      `cluster       ${c.name} ${c.weight}%${c.found ? ` ${c.type ?? ''}` : ' NOT SERVED'}${from(c.provenance)}`,
    );
    for (const p of c.endpoints)
      lines.push(
        `                ${p.address}${p.port !== undefined ? `:${p.port}` : ''}${p.locality ? ` ${p.locality}` : ''}${p.health ? ` ${p.health}` : ''}${p.priority ? ` priority ${p.priority}` : ''}`,
      );
    if (c.found && c.endpoints.length === 0) lines.push('                no endpoints');
  }
  for (const n of e.notes) lines.push(`note: ${n}`);
  return `${lines.join('\n')}\n`;
}

export function acrossText(a: AcrossAnswer): string {
  const lines = a.versions.map((v) => `${v.version.padEnd(6)} ${v.digest.slice(0, 19)}  ${v.summary}`);
  for (const c of a.changes) {
    lines.push(`changed ${c.from} → ${c.to}:`);
    for (const [part, { before, after }] of Object.entries(c.parts)) lines.push(`  ${part}: ${before} → ${after}`);
  }
  if (a.changes.length === 0) lines.push('the answer is the same in every version');
  return `${lines.join('\n')}\n`;
}

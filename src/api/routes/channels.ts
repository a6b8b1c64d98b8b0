/** Read routes over channels and their snapshots. */
import { loadInputsView } from '../inputs-view.js';
import type { ApiApp, ApiDeps, Guard } from '../context.js';
import { badRequest, notFound } from '../../errors.js';
import type { ChannelStatus, HistoryOps } from '../history-port.js';
import { intQuery, knownChannel, metadataQuery, selectorOf, typesQuery } from '../request.js';
import { servedConfig } from '../served-config.js';
import { recordDiagnosticCounts, recordDiagnostics, type VersionRecord } from '../../snapshot/manifest.js';
import { candidatesChannel } from '../../history/context.js';
import { shownCounts } from '../../history/mesh-summary.js';
import { versionLabel } from '../../history/select.js';

export const PAGE_DEFAULT = 20;
export const PAGE_MAX = 200;

/** current | candidate | pinned | tagged[...]: what a version is to its channel. */
export function versionStatus(r: VersionRecord, s: ChannelStatus) {
  const version = r.version;
  if (r.status === 'candidate') return { current: false, candidate: true, pinned: false, tags: [] as string[] };
  const tags = Object.entries(s.tags)
    .filter(([, v]) => v === version)
    .map(([name]) => name)
    .sort();
  return {
    current: s.current === version,
    candidate: false,
    pinned: s.pinned?.version === version,
    tags,
  };
}

/** A version record without its (possibly long) diagnostics list (older records carry it): counts instead. */
export function summary(r: VersionRecord, s: ChannelStatus) {
  const { diagnostics: _list, ...rest } = r;
  return {
    ...rest,
    resources: shownCounts(r.counts),
    diagnosticCounts: recordDiagnosticCounts(r),
    label: versionLabel(r),
    status: versionStatus(r, s),
  };
}

export function channelRoutes(app: ApiApp, deps: ApiDeps, history: HistoryOps, read: Guard): void {
  const { store } = deps;
  const select = async (channel: string, v: string | undefined): Promise<VersionRecord> =>
    history.select(store, channel, selectorOf(v, 'version'));

  app.get('/api/v1/channels', read, async (c) => {
    const names = new Set([deps.channelDefault, ...deps.channels, ...(await history.channels(store))]);
    const out = [];
    for (const name of [...names].sort()) {
      const s = await history.status(store, name);
      out.push({ name, default: name === deps.channelDefault, ...s });
    }
    return c.json({ channels: out });
  });

  app.get('/api/v1/channels/:ch/snapshots', read, async (c) => {
    const channel = await knownChannel(c, deps);
    const limit = intQuery(c, 'limit', 1, PAGE_MAX) ?? PAGE_DEFAULT;
    const cursor = c.req.query('cursor');
    if (cursor !== undefined && !/^[1-9][0-9]{0,9}$/.test(cursor))
      throw badRequest('cursor must be a value returned as nextCursor');
    const all = await store.listVersions(channel);
    const below = cursor === undefined ? all : all.filter((v) => v < Number(cursor));
    const page = below.slice(0, limit);
    const status = await history.status(store, channel);
    const snapshots = [];
    for (const v of page) {
      const r = await store.getVersion(channel, v);
      if (r) snapshots.push(summary(r, status));
    }
    const last = page[page.length - 1];
    const nextCursor = below.length > page.length && last !== undefined ? String(last) : null;
    // Candidates are numbered apart (`candidate:N`): the first page lists them beside the versions.
    const candidates = [];
    if (cursor === undefined) {
      for (const n of status.candidates.slice(0, limit)) {
        const r = await store.getVersion(candidatesChannel(channel), n);
        if (r) candidates.push({ ...summary(r, status), label: `candidate:${n}` });
      }
    }
    return c.json({ channel, snapshots, nextCursor, candidates });
  });

  app.get('/api/v1/channels/:ch/snapshots/:v', read, async (c) => {
    const channel = await knownChannel(c, deps);
    const r = await select(channel, c.req.param('v'));
    return c.json({
      ...summary(r, await history.status(store, channel)),
      counts: r.counts,
      provenance: r.provenance ?? null,
    });
  });

  app.get('/api/v1/channels/:ch/snapshots/:v/diagnostics', read, async (c) => {
    const channel = await knownChannel(c, deps);
    const r = await select(channel, c.req.param('v'));
    const diagnostics = await recordDiagnostics(store, r);
    const { error, warning } = recordDiagnosticCounts(r);
    return c.json({ channel, version: r.version, counts: { error, warning }, diagnostics });
  });

  app.get('/api/v1/channels/:ch/snapshots/:v/inputs', read, async (c) => {
    const channel = await knownChannel(c, deps);
    const r = await select(channel, c.req.param('v'));
    if (r.inputs === undefined) throw notFound(`version ${r.version} of ${channel} has no stored inputs`);
    return c.json({ channel, version: r.version, ...(await loadInputsView(store, r.inputs)) });
  });

  app.get('/api/v1/channels/:ch/snapshots/:v/config', read, async (c) => {
    const channel = await knownChannel(c, deps);
    const node = c.req.query('node');
    if (node === undefined || node === '') throw badRequest('node is required (a proxy node id)');
    const types = typesQuery(c);
    const metadata = metadataQuery(c);
    const r = await select(channel, c.req.param('v'));
    const served = await servedConfig(store, r.digest, String(r.version), { id: node, metadata }, types);
    return c.json({ channel, version: r.version, digest: r.digest, classId: served.classId, config: served.dump });
  });
}

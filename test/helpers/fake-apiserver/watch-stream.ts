/**
 * One `?watch=true` request, served as kube-apiserver does: newline-delimited JSON events after the
 * requested resourceVersion (replayed from history, then live), BOOKMARKs when the client allowed
 * them, `timeoutSeconds` honoured by ending the stream cleanly, and an expired resourceVersion
 * answered with 410 — either as the HTTP status, or (what the real server does for watches) as an
 * in-stream ERROR event followed by the end of the stream.
 */
import type { ServerResponse } from 'node:http';
import { groupVersion, type ResourceType } from './catalog.js';
import type { Predicate } from './selectors.js';
import { status } from './status.js';
import type { KubeObject, ObjectStore, StoredEvent } from './store.js';

export interface WatchRequest {
  readonly resource: ResourceType;
  readonly version: string;
  readonly namespace: string | undefined;
  readonly predicate: Predicate;
  readonly resourceVersion: string;
  readonly allowBookmarks: boolean;
  readonly timeoutSeconds: number | undefined;
}

export interface WatchOptions {
  readonly bookmarkIntervalMs: number;
  readonly expiredWatch: 'status' | 'event';
  /** Server-side cap on a watch's life (as --min-request-timeout); 0 = none. */
  readonly watchTimeoutMs: number;
}

/** An open watch stream, as the server's test API sees it. */
export interface OpenWatch {
  readonly resource: ResourceType;
  readonly version: string;
  readonly namespace: string | undefined;
  readonly allowBookmarks: boolean;
  /** Sends a BOOKMARK now (no-op when the client did not allow bookmarks). */
  bookmark(): void;
  /** Ends the stream cleanly, as a server-side timeout does. */
  end(): void;
  /** Destroys the connection under the stream, as a network failure does. */
  drop(): void;
}

const line = (type: string, object: unknown): string => `${JSON.stringify({ type, object })}\n`;

function expiredStatus(rv: string, store: ObjectStore): Record<string, unknown> {
  return status(410, 'Expired', `too old resource version: ${rv} (${store.oldestWatchableRv()})`);
}

/** Serves a watch; returns the open stream, or undefined when it was answered and closed at once. */
export function serveWatch(
  res: ServerResponse,
  req: WatchRequest,
  store: ObjectStore,
  opts: WatchOptions,
  onClose: (w: OpenWatch) => void,
): OpenWatch | undefined {
  const apiVersion = groupVersion(req.resource.group, req.version);
  const visible = (e: { resource: ResourceType; object: KubeObject }): boolean =>
    e.resource === req.resource &&
    (req.namespace === undefined || e.object.metadata.namespace === req.namespace) &&
    req.predicate(e.object);
  const asServed = (o: KubeObject): KubeObject => ({ ...o, apiVersion });

  // "" and "0" mean "current state, then changes": synthetic ADDED events for what exists now.
  let replay: { type: string; object: KubeObject }[];
  if (req.resourceVersion === '' || req.resourceVersion === '0') {
    replay = store
      .list(req.resource, req.namespace)
      .filter(req.predicate)
      .map((o) => ({ type: 'ADDED', object: o }));
  } else {
    const after = store.eventsAfter(Number(req.resourceVersion));
    if (after === 'expired') {
      const body = expiredStatus(req.resourceVersion, store);
      if (opts.expiredWatch === 'status') {
        res.writeHead(410, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      } else {
        res.writeHead(200, { 'content-type': 'application/json' }).end(line('ERROR', body));
      }
      return undefined;
    }
    replay = after.filter(visible);
  }

  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-cache, private' });
  res.flushHeaders();
  const timers: NodeJS.Timeout[] = [];
  let closed = false;
  const write = (s: string) => {
    if (!closed) res.write(s);
  };
  const unsubscribe = store.subscribe((e: StoredEvent) => {
    if (visible(e)) write(line(e.type, asServed(e.object)));
  });
  const watch: OpenWatch = {
    resource: req.resource,
    version: req.version,
    namespace: req.namespace,
    allowBookmarks: req.allowBookmarks,
    bookmark: () => {
      // Every event up to the current revision has been written already (events are delivered
      // synchronously), so the current revision is a safe place to resume from.
      if (req.allowBookmarks)
        write(
          line('BOOKMARK', {
            kind: req.resource.kind,
            apiVersion,
            metadata: { resourceVersion: String(store.currentRv()) },
          }),
        );
    },
    // Both mark the stream closed at once (not on 'finish'/'close', which come a tick later), so
    // an apply() right after end() or drop() is not written to a stream that is going away.
    end: () => {
      if (closed) return;
      cleanup();
      res.end();
    },
    drop: () => {
      cleanup();
      res.socket?.destroy();
    },
  };
  const cleanup = () => {
    if (closed) return;
    closed = true;
    unsubscribe();
    for (const t of timers) clearTimeout(t);
    onClose(watch);
  };
  res.on('close', cleanup);
  res.on('finish', cleanup);

  for (const e of replay) write(line(e.type, asServed(e.object)));
  if (req.allowBookmarks && opts.bookmarkIntervalMs > 0)
    timers.push(setInterval(watch.bookmark, opts.bookmarkIntervalMs));
  const limitMs = Math.min(
    req.timeoutSeconds !== undefined ? req.timeoutSeconds * 1000 : Infinity,
    opts.watchTimeoutMs > 0 ? opts.watchTimeoutMs : Infinity,
  );
  if (Number.isFinite(limitMs)) timers.push(setTimeout(watch.end, limitMs));
  return watch;
}

/**
 * A local HTTP server that behaves like kube-apiserver where client-node's informers look:
 * discovery, list, get and watch of the collections the watcher reads, one global resourceVersion,
 * replayable watch history with expiry (410), BOOKMARKs, and fault injection. Tests drive it
 * through `apply` / `delete` and observe it through `requests`. Over HTTP it writes only status
 * subresources (PUT, merge PATCH; other writes: 405). Not modelled: list pagination (`limit`/`continue` are ignored: one page), protobuf, watch of a single
 * object by path, "too large resourceVersion" waits.
 */
import { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import {
  CRD_GROUPS,
  Catalog,
  DEFAULT_RESOURCES,
  type ResourceType,
  groupVersion,
  hasStatusSubresource,
  splitApiVersion,
} from './catalog.js';
import { mergePatch, withStatusDefaults } from './status-writes.js';
import { Discovery } from './discovery.js';
import { Faults, type RequestInfo, type RequestMatch, matches } from './faults.js';
import { kubeconfigText } from './kubeconfig.js';
import { parsePath } from './paths.js';
import { selector } from './selectors.js';
import { status, statusFor } from './status.js';
import { type KubeObject, ObjectStore } from './store.js';
import { type OpenWatch, serveWatch } from './watch-stream.js';

export interface FakeApiServerOptions {
  /** Resource types served; default: everything the watcher reads (catalog.ts). */
  readonly resources?: readonly ResourceType[];
  /** Group-versions served at start ("v1", "networking.istio.io/v1", ...); default: all. */
  readonly served?: readonly string[];
  /** Group-versions NOT served at start (taken out of `served`). */
  readonly notServed?: readonly string[];
  /** Watch events retained for replay; older resourceVersions are expired. Default 1000. */
  readonly historyLimit?: number;
  /** The resourceVersion before the first write. Default 100. */
  readonly startResourceVersion?: number;
  /** Interval of periodic BOOKMARKs on watches that allow them; 0 = only on `bookmark()`. Default 1000. */
  readonly bookmarkIntervalMs?: number;
  /** How an expired watch resourceVersion is answered. Default 'event' (what kube-apiserver does). */
  readonly expiredWatch?: 'status' | 'event';
  /** Server-side cap on every watch's life; 0 = none (default). */
  readonly watchTimeoutMs?: number;
  /** Objects present at start. */
  readonly objects?: readonly KubeObject[];
  /** Clock for creationTimestamp. */
  readonly now?: () => Date;
}

export interface LoggedRequest extends RequestInfo {
  /** HTTP status answered (for a watch: when the stream started). */
  status: number;
  readonly at: number;
  readonly authorization: string | undefined;
}

export type KindRef = string | { readonly apiVersion: string; readonly kind: string };

export class FakeApiServer extends EventEmitter {
  readonly catalog: Catalog;
  readonly requests: LoggedRequest[] = [];
  private readonly served: Set<string>;
  private readonly discovery: Discovery;
  private readonly store: ObjectStore;
  private readonly faults = new Faults();
  private readonly watches = new Set<OpenWatch>();
  private readonly sockets = new Set<Socket>();
  private readonly server: Server;
  private readonly opts: Required<Pick<FakeApiServerOptions, 'bookmarkIntervalMs' | 'expiredWatch' | 'watchTimeoutMs'>>;
  private baseUrl = '';

  constructor(options: FakeApiServerOptions = {}) {
    super();
    this.catalog = new Catalog(options.resources ?? DEFAULT_RESOURCES);
    const notServed = new Set(options.notServed ?? []);
    this.served = new Set((options.served ?? this.catalog.allGroupVersions()).filter((gv) => !notServed.has(gv)));
    this.discovery = new Discovery(this.catalog, this.served);
    this.store = new ObjectStore(
      options.historyLimit ?? 1000,
      options.startResourceVersion ?? 100,
      options.now ?? (() => new Date()),
    );
    this.opts = {
      bookmarkIntervalMs: options.bookmarkIntervalMs ?? 1000,
      expiredWatch: options.expiredWatch ?? 'event',
      watchTimeoutMs: options.watchTimeoutMs ?? 0,
    };
    for (const g of CRD_GROUPS) this.syncCrds(g);
    for (const o of options.objects ?? []) this.apply(o);
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.on('connection', (s: Socket) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => resolve());
    });
    const { port } = this.server.address() as AddressInfo;
    this.baseUrl = `http://127.0.0.1:${port}`;
    return this;
  }

  get url(): string {
    return this.baseUrl;
  }

  /** A kubeconfig (JSON, which is YAML) pointing at this server; http needs insecure-skip-tls-verify. */
  kubeconfig(context = 'fake'): string {
    return kubeconfigText(this.baseUrl, context);
  }

  // ---- objects -------------------------------------------------------------------------------

  /** Creates or updates (bumps the global resourceVersion and emits an event unless unchanged). */
  apply(obj: KubeObject): KubeObject {
    const { group } = splitApiVersion(obj.apiVersion);
    const r = this.catalog.byKindName(obj.kind, group);
    if (!r) throw new Error(`fake-apiserver: unknown kind ${obj.apiVersion} ${obj.kind}`);
    return this.store.apply(r, obj);
  }

  delete(kind: KindRef, namespace: string | undefined, name: string): KubeObject | undefined {
    return this.store.delete(this.resolve(kind), namespace ?? '', name);
  }

  get(kind: KindRef, namespace: string | undefined, name: string): KubeObject | undefined {
    return this.store.get(this.resolve(kind), namespace ?? '', name);
  }

  /** Every stored object (of one kind when given), oldest resourceVersion first. */
  objects(kind?: KindRef): KubeObject[] {
    return this.store.list(kind === undefined ? undefined : this.resolve(kind));
  }

  resourceVersion(): number {
    return this.store.currentRv();
  }

  /** Drops the watch history: any watch from an older resourceVersion now gets 410. */
  compact(): void {
    this.store.compact();
  }

  private resolve(kind: KindRef): ResourceType {
    const r =
      typeof kind === 'string'
        ? this.catalog.byKindName(kind)
        : this.catalog.byKindName(kind.kind, splitApiVersion(kind.apiVersion).group);
    if (!r) throw new Error(`fake-apiserver: unknown kind ${JSON.stringify(kind)}`);
    return r;
  }

  // ---- served group-versions (CRDs installed or not) -----------------------------------------

  isServed(gv: string): boolean {
    return this.served.has(gv);
  }

  /** Starts serving a group-version (a CRD got installed); its CRD objects appear. */
  addGroupVersion(gv: string): void {
    this.served.add(gv);
    this.syncCrds(splitApiVersion(gv).group);
  }

  /**
   * Stops serving a group-version: discovery omits it, its paths answer 404 and its open watches
   * end. Stored objects are kept (visible again in any other or re-added version).
   */
  removeGroupVersion(gv: string): void {
    this.served.delete(gv);
    for (const w of [...this.watches]) if (groupVersion(w.resource.group, w.version) === gv) w.end();
    this.syncCrds(splitApiVersion(gv).group);
  }

  /** Keeps apiextensions' CustomResourceDefinition objects in step with what a CRD group serves. */
  private syncCrds(group: string): void {
    if (!CRD_GROUPS.has(group) || !this.catalog.byKindName('CustomResourceDefinition', 'apiextensions.k8s.io')) return;
    const versions = this.discovery.servedVersions(group);
    for (const r of this.catalog.resources.filter((x) => x.group === group)) {
      const name = `${r.plural}.${group}`;
      if (versions.length === 0) {
        this.delete({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition' }, undefined, name);
        continue;
      }
      this.apply({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name },
        spec: {
          group,
          names: { plural: r.plural, singular: r.singular, kind: r.kind, listKind: `${r.kind}List` },
          scope: r.namespaced ? 'Namespaced' : 'Cluster',
          versions: versions.map((v, i) => ({ name: v, served: true, storage: i === 0 })),
        },
      });
    }
  }

  // ---- faults and watch control --------------------------------------------------------------

  /** The next `count` requests matching `match` answer `status` (default 500) with a Status body. */
  failNext(count: number, match?: RequestMatch, code = 500): void {
    this.faults.failNext(count, code, match);
  }

  /** Delays every matching request by `ms` before it is answered (until `clearFaults`). */
  delay(ms: number, match?: RequestMatch): void {
    this.faults.delay(ms, match);
  }

  clearFaults(): void {
    this.faults.clear();
  }

  /** Open watch streams right now. */
  openWatches(): readonly OpenWatch[] {
    return [...this.watches];
  }

  /** Destroys every open watch connection (a network failure); returns how many. */
  dropWatches(): number {
    const ws = [...this.watches];
    for (const w of ws) w.drop();
    return ws.length;
  }

  /** Ends every open watch cleanly (a server-side timeout); returns how many. */
  endWatches(): number {
    const ws = [...this.watches];
    for (const w of ws) w.end();
    return ws.length;
  }

  /** Sends a BOOKMARK now on every watch that allows them. */
  bookmark(): void {
    for (const w of this.watches) w.bookmark();
  }

  /** Resolves with the next request matching `match` that arrives after this call. */
  nextRequest(match?: RequestMatch, timeoutMs = 5000): Promise<LoggedRequest> {
    return new Promise((resolve, reject) => {
      const onReq = (r: LoggedRequest) => {
        if (!matches(match, r)) return;
        clearTimeout(timer);
        this.off('request', onReq);
        resolve(r);
      };
      const timer = setTimeout(() => {
        this.off('request', onReq);
        reject(new Error(`fake-apiserver: no request matching ${String(match)} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.on('request', onReq);
    });
  }

  /** Stops listening and destroys every connection; never waits for clients. */
  async close(): Promise<void> {
    for (const w of [...this.watches]) w.drop();
    for (const s of this.sockets) s.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  // ---- HTTP ---------------------------------------------------------------------------------

  /**
   * PUT or PATCH (application/merge-patch+json) of PLURAL/NAME/status, as kube-apiserver answers
   * it: the stored object (with the CRD's defaults in the status), 404 for a missing object, 409
   * when the request names another resourceVersion than the object's, 415 for other patch types.
   */
  private async writeStatus(
    req: IncomingMessage,
    r: ResourceType,
    namespace: string,
    name: string,
    apiVersion: string,
    send: (code: number, body: unknown) => void,
  ): Promise<void> {
    const body = await jsonBody(req);
    const meta = (body as { metadata?: { resourceVersion?: unknown; name?: unknown } } | undefined)?.metadata;
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      return send(400, status(400, 'BadRequest', 'the request body is not a JSON object'));
    let next: unknown;
    if (req.method === 'PATCH') {
      if (!(req.headers['content-type'] ?? '').startsWith('application/merge-patch+json'))
        return send(
          415,
          status(
            415,
            'UnsupportedMediaType',
            `the patch type ${req.headers['content-type'] ?? ''} is not supported here`,
          ),
        );
      const current = this.store.get(r, namespace, name);
      if (!current) return send(404, status(404, 'NotFound', `${r.plural}.${r.group} "${name}" not found`));
      next = (mergePatch(current, body) as { status?: unknown }).status;
    } else {
      if (meta?.name !== name)
        return send(
          400,
          status(
            400,
            'BadRequest',
            `the name of the object (${String(meta?.name)}) does not match the name on the URL (${name})`,
          ),
        );
      next = (body as { status?: unknown }).status;
    }
    const rv = typeof meta?.resourceVersion === 'string' ? meta.resourceVersion : undefined;
    const out = this.store.writeStatus(r, namespace, name, withStatusDefaults(next), rv);
    if (out === 'not-found') return send(404, status(404, 'NotFound', `${r.plural}.${r.group} "${name}" not found`));
    if (out === 'conflict')
      return send(
        409,
        status(
          409,
          'Conflict',
          `Operation cannot be fulfilled on ${r.plural}.${r.group} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
        ),
      );
    send(200, { ...out, apiVersion });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    const query = Object.fromEntries(url.searchParams);
    const watch = query.watch === 'true' || query.watch === '1';
    const entry: LoggedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query,
      watch,
      status: 0,
      at: Date.now(),
      authorization: req.headers.authorization,
    };
    this.requests.push(entry);
    const send = (code: number, body: unknown) => {
      entry.status = code;
      if (!res.destroyed) res.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    const fail = this.faults.takeFailure(entry);
    const delayMs = this.faults.delayFor(entry);
    this.emit('request', entry);
    if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
    if (res.destroyed) return;
    if (fail !== undefined) return send(fail, statusFor(fail, 'injected failure'));
    const route = parsePath(url.pathname);
    if (entry.method !== 'GET' && !(route.kind === 'resource' && route.subresource === 'status'))
      return send(
        405,
        statusFor(405, 'the fake API server is read-only over HTTP but for status subresources; use apply()'),
      );

    const notFound = () => send(404, statusFor(404, 'the server could not find the requested resource'));
    switch (route.kind) {
      case 'coreVersions':
        return send(200, this.discovery.coreVersions());
      case 'groupList':
        return send(200, this.discovery.groupList());
      case 'group': {
        const g = this.discovery.groupDoc(route.group);
        return g ? send(200, g) : notFound();
      }
      case 'resourceList': {
        const l = this.discovery.resourceList(route.group, route.version);
        return l ? send(200, l) : notFound();
      }
      case 'unknown':
        return notFound();
      case 'resource':
        break;
    }
    const r = this.catalog.byResource(route.group, route.plural);
    if (!r || !r.versions.includes(route.version) || !this.discovery.isServed(route.group, route.version))
      return notFound();
    if (route.namespace !== undefined && !r.namespaced) return notFound();
    const apiVersion = groupVersion(route.group, route.version);

    if (route.subresource === 'status') {
      if (!hasStatusSubresource(r) || route.name === undefined) return notFound();
      if (entry.method === 'PUT' || entry.method === 'PATCH')
        return this.writeStatus(req, r, route.namespace ?? '', route.name, apiVersion, send);
    }

    if (route.name !== undefined) {
      if (watch) return send(400, statusFor(400, 'watch of a single object: use fieldSelector=metadata.name=NAME'));
      const o = this.store.get(r, route.namespace ?? '', route.name);
      if (!o) return send(404, status(404, 'NotFound', `${r.plural} "${route.name}" not found`));
      return send(200, { ...o, apiVersion });
    }

    const predicate = selector(url.searchParams.get('labelSelector'), url.searchParams.get('fieldSelector'));
    if (watch) {
      const timeout = query.timeoutSeconds !== undefined ? Number(query.timeoutSeconds) : undefined;
      const w = serveWatch(
        res,
        {
          resource: r,
          version: route.version,
          namespace: route.namespace,
          predicate,
          resourceVersion: query.resourceVersion ?? '',
          allowBookmarks: query.allowWatchBookmarks === 'true',
          timeoutSeconds: timeout !== undefined && Number.isFinite(timeout) && timeout > 0 ? timeout : undefined,
        },
        this.store,
        this.opts,
        (closed) => this.watches.delete(closed),
      );
      entry.status = res.statusCode;
      if (w) this.watches.add(w);
      return;
    }
    // Like kube-apiserver, lists of built-in types omit kind/apiVersion on items (custom resources
    // keep them); a client must know the kind from what it listed.
    const typeMeta = CRD_GROUPS.has(r.group);
    const items = this.store
      .list(r, route.namespace)
      .filter(predicate)
      .map(({ kind: _k, apiVersion: _a, ...o }) => (typeMeta ? { apiVersion, kind: r.kind, ...o } : o));
    send(200, {
      kind: `${r.kind}List`,
      apiVersion,
      metadata: { resourceVersion: String(this.store.currentRv()) },
      items,
    });
  }
}

/** The body of a request, parsed as JSON; undefined when it is not JSON. */
async function jsonBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** Starts a fake API server on 127.0.0.1, a free port. Close it with `close()`. */
export function startFakeApiServer(options: FakeApiServerOptions = {}): Promise<FakeApiServer> {
  return new FakeApiServer(options).listen();
}

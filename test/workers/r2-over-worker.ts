/**
 * An R2 bucket driven through a Worker's fetch handler (`Miniflare.dispatchFetch`, asynchronous),
 * so that the store's R2 code runs against workerd's own R2 implementation without Miniflare's
 * synchronous magic proxy (`getR2Bucket`): that proxy blocks on `Atomics.wait` for every property
 * read and, on a heavily loaded machine, once tripped its `message?.id === id` assertion and then
 * failed every later call of the process.
 */
import type { Miniflare } from 'miniflare';
import type {
  R2BucketLike,
  R2ListLike,
  R2ObjectBodyLike,
  R2ObjectLike,
  R2PutOptionsLike,
} from '../../src/snapshot/store/r2.js';

/** The Worker: one operation per request, the R2 call made inside workerd; metadata as JSON headers. */
export const R2_WORKER_SCRIPT = `
const meta = (o) => JSON.stringify({ key: o.key, etag: o.etag, uploaded: o.uploaded.toISOString() });
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const op = url.searchParams.get('op');
    const key = url.searchParams.get('key') ?? '';
    const b = env.SNAPSHOTS;
    if (op === 'get') {
      const o = await b.get(key);
      return o ? new Response(await o.arrayBuffer(), { headers: { 'x-meta': meta(o) } }) : new Response(null, { status: 404 });
    }
    if (op === 'head') {
      const o = await b.head(key);
      return o ? new Response(null, { headers: { 'x-meta': meta(o) } }) : new Response(null, { status: 404 });
    }
    if (op === 'put') {
      const options = JSON.parse(url.searchParams.get('options') ?? '{}');
      const o = await b.put(key, new Uint8Array(await request.arrayBuffer()), options);
      return o ? new Response(null, { headers: { 'x-meta': meta(o) } }) : new Response(null, { status: 412 });
    }
    if (op === 'list') {
      const page = await b.list(JSON.parse(url.searchParams.get('options') ?? '{}'));
      return Response.json({
        objects: page.objects.map((o) => ({ key: o.key, etag: o.etag, uploaded: o.uploaded.toISOString() })),
        truncated: page.truncated,
        cursor: page.truncated ? page.cursor : undefined,
      });
    }
    if (op === 'delete') {
      await b.delete(key);
      return new Response(null, { status: 204 });
    }
    return new Response('unknown op', { status: 400 });
  },
};
`;

interface WireMeta {
  readonly key: string;
  readonly etag: string;
  readonly uploaded: string;
}

const objectOf = (m: WireMeta): R2ObjectLike => ({ key: m.key, etag: m.etag, uploaded: new Date(m.uploaded) });

export function r2OverWorker(mf: Miniflare): R2BucketLike {
  const call = async (op: string, params: Record<string, string>, body?: Uint8Array) => {
    const url = new URL('http://r2.test/');
    url.searchParams.set('op', op);
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    const res = await mf.dispatchFetch(url, {
      method: body ? 'PUT' : 'GET',
      ...(body ? { body: Buffer.from(body.buffer, body.byteOffset, body.byteLength) } : {}),
    });
    if (res.status >= 500 || res.status === 400) throw new Error(`r2 worker ${op}: ${res.status} ${await res.text()}`);
    return res;
  };
  const metaOf = (res: Response): WireMeta => JSON.parse(res.headers.get('x-meta') ?? 'null') as WireMeta;
  return {
    async get(key): Promise<R2ObjectBodyLike | null> {
      const res = await call('get', { key });
      if (res.status === 404) return null;
      const bytes = await res.arrayBuffer();
      return { ...objectOf(metaOf(res)), arrayBuffer: async () => bytes };
    },
    async head(key) {
      const res = await call('head', { key });
      await res.arrayBuffer();
      return res.status === 404 ? null : objectOf(metaOf(res));
    },
    async put(key, value, options?: R2PutOptionsLike) {
      const bytes = value instanceof Uint8Array ? value : new Uint8Array(value);
      const res = await call('put', { key, options: JSON.stringify(options ?? {}) }, bytes);
      await res.arrayBuffer();
      return res.status === 412 ? null : objectOf(metaOf(res));
    },
    async list(options = {}): Promise<R2ListLike> {
      const res = await call('list', { options: JSON.stringify(options) });
      const page = (await res.json()) as { objects: WireMeta[]; truncated: boolean; cursor?: string };
      return {
        objects: page.objects.map(objectOf),
        truncated: page.truncated,
        ...(page.cursor !== undefined ? { cursor: page.cursor } : {}),
      };
    },
    async delete(key) {
      await (await call('delete', { key })).arrayBuffer();
    },
  };
}

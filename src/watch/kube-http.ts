/**
 * Plain requests to the API server with the kubeconfig's credentials: lists, discovery, and the
 * status writes of `watch --write-status`.
 *
 * Lists are fetched as raw JSON rather than through client-node's typed API classes because
 * watch events arrive as raw JSON: the typed deserializer would turn a list item into class
 * instances with other value forms (dates, int-or-strings), and the same object would then look
 * changed between a list and a watch.
 */
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

export class KubeHttpError extends Error {
  override readonly name = 'KubeHttpError';
  constructor(
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
  }
}

const MAX_BODY = 512 * 1024 * 1024;

export function kubeGet(
  kc: KubeConfig,
  path: string,
  query: Readonly<Record<string, string>> = {},
  timeoutMs = 60_000,
): Promise<unknown> {
  return kubeRequest(kc, 'GET', path, { query, timeoutMs });
}

export interface KubeRequestOptions {
  readonly query?: Readonly<Record<string, string>>;
  /** Sent as JSON (`contentType`, default application/json). */
  readonly body?: unknown;
  readonly contentType?: string;
  readonly timeoutMs?: number;
}

/** One request with a JSON answer; a non-2xx status rejects with a KubeHttpError carrying it. */
export async function kubeRequest(
  kc: KubeConfig,
  method: 'GET' | 'PUT' | 'PATCH',
  path: string,
  options: KubeRequestOptions = {},
): Promise<unknown> {
  const { query = {}, body, timeoutMs = 60_000 } = options;
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig has no current cluster');
  const url = new URL(cluster.server.replace(/\/+$/, '') + path);
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body), 'utf8');
  const headers: Record<string, string> = { accept: 'application/json' };
  if (payload) {
    headers['content-type'] = options.contentType ?? 'application/json';
    headers['content-length'] = String(payload.length);
  }
  const opts: RequestOptions & Record<string, unknown> = { method, headers };
  await kc.applyToHTTPSOptions(opts);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const what = `${method} ${path}`;
  return new Promise((resolve, reject) => {
    const req = send(url, { ...opts, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_BODY) req.destroy(new Error(`response of ${path} is larger than ${MAX_BODY} bytes`));
        else chunks.push(c);
      });
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const code = res.statusCode ?? 0;
        if (code < 200 || code >= 300) {
          reject(new KubeHttpError(code, `${what}: ${code} ${text.slice(0, 300)}`));
          return;
        }
        try {
          resolve(JSON.parse(text));
        } catch {
          reject(new KubeHttpError(code, `${what}: response is not JSON`));
        }
      });
    });
    req.on('timeout', () => req.destroy(new Error(`${what}: timed out after ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}

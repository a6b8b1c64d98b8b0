/**
 * s3rver ignores `If-None-Match` and `If-Match` on PutObject (../shared/NOTES.md). This proxy sits
 * in front of it and enforces them the way AWS S3 documents conditional writes, so the S3 backend's
 * conditional path (its requests, the 412 answers and how it reads them) runs over the S3 protocol
 * with the real SDK:
 *
 * - `If-None-Match: *` on a key that exists → 412 PreconditionFailed;
 * - `If-Match: <etag>` → 404 NoSuchKey when the key is absent, 412 when its ETag differs.
 *
 * Check and write happen under a per-key lock, so racing writers see S3's atomicity. Everything else
 * (and every byte of a request, signature headers included) passes through unchanged. Test-only: a
 * stand-in for the one feature s3rver lacks, not a fake store.
 */
import { createServer, request, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { RunningS3 } from './s3rver.js';

export interface ConditionalProxy {
  readonly endpoint: string;
  /** Conditional writes refused so far (412 and 404 answers). */
  refused(): number;
  close(): Promise<void>;
}

export async function startConditionalProxy(s3: RunningS3): Promise<ConditionalProxy> {
  const upstream = new URL(s3.endpoint);
  const client = new S3Client({
    endpoint: s3.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: s3.credentials,
  });
  const locks = new Map<string, Promise<unknown>>();
  let refused = 0;

  /** Runs `fn` after every earlier holder of `key`'s lock. */
  const locked = <T>(key: string, fn: () => Promise<T>): Promise<T> => {
    const run = (locks.get(key) ?? Promise.resolve()).then(fn, fn);
    const tail = run.catch(() => undefined);
    locks.set(key, tail);
    void tail.then(() => {
      if (locks.get(key) === tail) locks.delete(key);
    });
    return run;
  };

  const etagOf = async (bucket: string, key: string): Promise<string | null> => {
    try {
      return (await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))).ETag ?? '';
    } catch (e) {
      if ((e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return null;
      throw e;
    }
  };

  const forward = (req: IncomingMessage, body: Buffer, res: ServerResponse): Promise<void> =>
    new Promise((resolve, reject) => {
      const up = request(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          answer.on('end', resolve);
          answer.on('error', reject);
        },
      );
      up.on('error', reject);
      up.end(body);
    });

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const condition = conditionOf(req.method, req.headers);
      const done = condition
        ? locked(req.url?.split('?')[0] ?? '', async () => {
            const [bucket, key] = bucketAndKey(req.url ?? '/');
            const etag = await etagOf(bucket, key);
            const failure =
              condition.ifNoneMatch !== undefined
                ? etag !== null
                  ? 412
                  : undefined
                : etag === null
                  ? 404
                  : etag !== condition.ifMatch
                    ? 412
                    : undefined;
            if (failure === undefined) return forward(req, body, res);
            refused++;
            answerError(res, failure, key, condition.ifNoneMatch !== undefined ? 'If-None-Match' : 'If-Match');
          })
        : forward(req, body, res);
      done.catch((e: unknown) => {
        if (!res.headersSent) res.writeHead(502);
        res.end(String(e));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    refused: () => refused,
    async close() {
      client.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A PutObject (not a copy) carrying a write condition. */
function conditionOf(
  method: string | undefined,
  headers: IncomingHttpHeaders,
): { ifNoneMatch?: string; ifMatch?: string } | undefined {
  if (method !== 'PUT' || headers['x-amz-copy-source'] !== undefined) return undefined;
  const noneMatch = headers['if-none-match'];
  const match = headers['if-match'];
  if (typeof noneMatch === 'string') return { ifNoneMatch: noneMatch };
  if (typeof match === 'string') return { ifMatch: match };
  return undefined;
}

/** Path-style URL: /bucket/key… */
function bucketAndKey(url: string): [string, string] {
  const path = decodeURIComponent(url.split('?')[0] ?? '/').replace(/^\//, '');
  const slash = path.indexOf('/');
  return [path.slice(0, slash), path.slice(slash + 1)];
}

function answerError(res: ServerResponse, status: 404 | 412, key: string, condition: string): void {
  const [code, message] =
    status === 412
      ? ['PreconditionFailed', 'At least one of the pre-conditions you specified did not hold']
      : ['NoSuchKey', 'The specified key does not exist.'];
  const xml = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message>${status === 412 ? `<Condition>${condition}</Condition>` : `<Key>${escapeXml(key)}</Key>`}<RequestId>meshsnap-test</RequestId></Error>`;
  res.writeHead(status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(xml) });
  res.end(xml);
}

const escapeXml = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

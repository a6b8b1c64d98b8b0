/**
 * The relay's few calls to the Kubernetes API server with the kubeconfig's credentials: TokenReview
 * creation and GETs of the issuer discovery documents. Raw JSON over node:https (I/O at the edge).
 */
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import type { FetchJson } from './jwks.js';
import type { TokenReviewer, TokenReviewStatus } from './token-review.js';

const MAX_BODY = 4 * 1024 * 1024;

export async function kubeJson(
  kc: KubeConfig,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  timeoutMs = 10_000,
): Promise<unknown> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig has no current cluster');
  const url = new URL(cluster.server.replace(/\/+$/, '') + path);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const opts: RequestOptions & Record<string, unknown> = {
    method,
    headers: {
      // The API server serves the JWKS only as application/jwk-set+json.
      accept: 'application/json, application/jwk-set+json',
      ...(payload !== undefined ? { 'content-type': 'application/json' } : {}),
    },
  };
  await kc.applyToHTTPSOptions(opts);
  return sendJson(url, { ...opts, timeout: timeoutMs }, payload);
}

/** One JSON request; rejects on a non-2xx status, a body over 4 MiB, or a timeout. */
export function sendJson(url: URL, opts: RequestOptions, payload?: string): Promise<unknown> {
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(url, opts, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_BODY) req.destroy(new Error(`${url.pathname}: response over ${MAX_BODY} bytes`));
        else chunks.push(c);
      });
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const code = res.statusCode ?? 0;
        if (code < 200 || code >= 300) return reject(new Error(`${url.pathname}: HTTP ${code} ${text.slice(0, 200)}`));
        try {
          resolve(JSON.parse(text));
        } catch {
          reject(new Error(`${url.pathname}: the response is not JSON`));
        }
      });
    });
    req.on('timeout', () => req.destroy(new Error(`${url.pathname}: no answer in time`)));
    req.on('error', reject);
    req.end(payload);
  });
}

export const kubeTokenReviewer =
  (kc: KubeConfig): TokenReviewer =>
  async (token, audiences) => {
    const review = (await kubeJson(kc, 'POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token, ...(audiences.length > 0 ? { audiences } : {}) },
    })) as { status?: TokenReviewStatus };
    return review.status ?? {};
  };

/**
 * Issuer discovery through the API server (which serves `/.well-known/openid-configuration` and
 * `/openid/v1/jwks` to authenticated clients): every URL is fetched at its path on the API server,
 * so an in-cluster issuer name such as https://kubernetes.default.svc needs no DNS or CA of its own.
 */
export const kubeFetchJson =
  (kc: KubeConfig): FetchJson =>
  (url) => {
    const u = new URL(url);
    return kubeJson(kc, 'GET', u.pathname + u.search);
  };

/** Plain HTTPS discovery for an issuer reachable on its own, optionally trusting a given CA bundle. */
export const httpsFetchJson =
  (ca?: Buffer): FetchJson =>
  (url) =>
    sendJson(new URL(url), {
      method: 'GET',
      headers: { accept: 'application/json, application/jwk-set+json' },
      timeout: 10_000,
      ...(ca ? { ca } : {}),
    });

/**
 * istiod's SDS authorization (CredentialsController.Authorize): may the service account `list`
 * `secrets` in its namespace? A SubjectAccessReview answers; the relay caches it per identity.
 */
export const kubeSecretAccessReview =
  (kc: KubeConfig) =>
  async (namespace: string, serviceAccount: string): Promise<boolean> => {
    const review = (await kubeJson(kc, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: `system:serviceaccount:${namespace}:${serviceAccount}`,
        groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
        resourceAttributes: { namespace, verb: 'list', resource: 'secrets' },
      },
    })) as { status?: { allowed?: boolean } };
    return review.status?.allowed === true;
  };

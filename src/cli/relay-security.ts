/**
 * `meshsnap relay`'s security flags turned into the relay's options: TLS files, `--insecure`,
 * Kubernetes access (TokenReview, JWKS discovery through the API server, SDS from Secrets, the
 * SubjectAccessReview that guards keys) and the debug token from `$MESHSNAP_RELAY_DEBUG_TOKEN`.
 * Every combination that would leave the port open without the operator saying so is a usage error.
 */
import { readFileSync } from 'node:fs';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '../log.js';
import { KubeSecretSource } from '../relay/sds/kube-secret-source.js';
import type { SecretSource } from '../relay/sds/secret-source.js';
import type { Authenticator } from '../relay/security/authenticate.js';
import { jwksAuthenticator } from '../relay/security/jwks.js';
import {
  httpsFetchJson,
  kubeFetchJson,
  kubeSecretAccessReview,
  kubeTokenReviewer,
} from '../relay/security/kube-requests.js';
import type { RelaySecurityOptions } from '../relay/security/relay-security.js';
import { tokenReviewAuthenticator } from '../relay/security/token-review.js';
import { UsageError, intFlag } from './args.js';

export interface RelaySecurityFlags {
  readonly 'tls-cert'?: string | undefined;
  readonly 'tls-key'?: string | undefined;
  readonly 'client-ca'?: string | undefined;
  readonly 'tls-reload-ms'?: string | undefined;
  readonly insecure?: boolean | undefined;
  readonly kube?: boolean | undefined;
  readonly kubeconfig?: string | undefined;
  readonly context?: string | undefined;
  readonly jwt?: string | undefined;
  readonly 'jwt-audience'?: readonly string[] | undefined;
  readonly 'jwt-issuer'?: string | undefined;
  readonly 'jwt-issuer-ca'?: string | undefined;
  readonly 'trust-domain'?: string | undefined;
  readonly 'secret-namespace'?: readonly string[] | undefined;
  readonly sds?: string | undefined;
}

export interface RelaySecuritySetup {
  readonly security: RelaySecurityOptions;
  readonly secrets?: SecretSource;
}

export async function relaySecurity(
  f: RelaySecurityFlags,
  log: Logger,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<RelaySecuritySetup> {
  const cert = f['tls-cert'];
  const key = f['tls-key'];
  if ((cert === undefined) !== (key === undefined)) throw new UsageError('--tls-cert and --tls-key go together');
  if (f['client-ca'] !== undefined && cert === undefined)
    throw new UsageError('--client-ca needs --tls-cert and --tls-key');
  if (cert === undefined && !f.insecure)
    throw new UsageError(
      'the relay serves xDS over TLS: give --tls-cert and --tls-key (and --client-ca for mTLS), or run plaintext with --insecure',
    );
  const jwt = f.jwt ?? 'review';
  if (!['review', 'jwks', 'off'].includes(jwt))
    throw new UsageError(`--jwt: ${JSON.stringify(jwt)} is not review, jwks or off`);
  const sds = f.sds ?? 'on';
  if (!['on', 'off'].includes(sds)) throw new UsageError(`--sds: ${JSON.stringify(sds)} is not on or off`);
  const useKube = f.kube === true || f.kubeconfig !== undefined;
  // client-node is loaded only when Kubernetes is used: a plain relay starts without it.
  const kc: KubeConfig | undefined = useKube
    ? (await import('./kubeconfig.js')).loadKubeConfig(
        f.kubeconfig,
        f.context,
        'or run without --kube (no TokenReview, no SDS)',
      )
    : undefined;
  const audiences = f['jwt-audience']?.length ? [...f['jwt-audience']] : ['istio-ca'];
  const trustDomain = f['trust-domain'] ?? 'cluster.local';

  const authenticators: Authenticator[] = [];
  if (jwt === 'review' && kc)
    authenticators.push(tokenReviewAuthenticator({ review: kubeTokenReviewer(kc), audiences, trustDomain }));
  if (jwt === 'jwks') {
    const issuer = f['jwt-issuer'];
    if (!issuer && !kc) throw new UsageError('--jwt jwks needs --jwt-issuer URL, or --kube to ask the API server');
    const ca = f['jwt-issuer-ca'] !== undefined ? readFileSync(f['jwt-issuer-ca']) : undefined;
    authenticators.push(
      jwksAuthenticator({
        issuer: issuer ?? 'https://kubernetes.default.svc.cluster.local',
        fetchJson: issuer ? httpsFetchJson(ca) : kubeFetchJson(kc as KubeConfig),
        audiences,
        trustDomain,
      }),
    );
  }
  if (cert !== undefined && f['client-ca'] === undefined && authenticators.length === 0 && !f.insecure)
    throw new UsageError(
      'no way to authenticate proxies: add --client-ca (mTLS) or --kube (service-account tokens by TokenReview), or --jwt jwks --jwt-issuer URL',
    );

  const namespaces = f['secret-namespace'];
  const secrets =
    kc && sds === 'on'
      ? new KubeSecretSource({ kubeConfig: kc, log, ...(namespaces?.length ? { namespaces } : {}) })
      : undefined;
  const debugToken = env.MESHSNAP_RELAY_DEBUG_TOKEN;
  return {
    security: {
      ...(cert !== undefined && key !== undefined
        ? {
            tls: {
              certFile: cert,
              keyFile: key,
              ...(f['client-ca'] !== undefined ? { clientCaFile: f['client-ca'] } : {}),
              ...(f['tls-reload-ms'] !== undefined
                ? { reloadMs: intFlag('tls-reload-ms', f['tls-reload-ms'], 100, 3_600_000) }
                : {}),
            },
          }
        : {}),
      insecure: f.insecure === true,
      authenticators,
      ...(kc ? { secretAccess: kubeSecretAccessReview(kc) } : {}),
      ...(debugToken ? { debugToken } : {}),
    },
    ...(secrets ? { secrets } : {}),
  };
}

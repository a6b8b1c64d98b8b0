/**
 * The relay's security configuration in one place: TLS on the xDS port (files reloaded on change),
 * who is authenticated how, whether anonymous plaintext is allowed (`insecure`), and the SDS
 * secrets source. Turns it into the grpc-js server credentials, the xDS server's admission and the
 * status /readyz and the logs show.
 */
import * as grpc from '@grpc/grpc-js';
import { LRUCache } from 'lru-cache';
import type { SecretResolver } from '../sds/secret-resolver.js';
import type { Admission, XdsSecurity } from '../xds/server.js';
import { authenticate, type Authenticator } from './authenticate.js';
import { mtlsAuthenticator } from './mtls.js';
import { TlsFileProvider, type TlsFiles, type TlsReloadEvents } from './tls-files.js';

export interface RelaySecurityOptions {
  /** Serve TLS with these PEM files (re-read every `reloadMs`, default 5 s); with `clientCaFile`, mTLS. */
  readonly tls?: TlsFiles & { readonly reloadMs?: number };
  /**
   * Allow plaintext (no `tls`) and anonymous proxies. A library caller that sets no `security` at all
   * gets this (and a loud warning); `meshsnap relay` asks for `--insecure` explicitly.
   */
  readonly insecure?: boolean;
  /** Token authenticators (TokenReview, JWKS); mTLS is added by itself when `tls.clientCaFile` is set. */
  readonly authenticators?: readonly Authenticator[];
  /** May the service account read Secrets of its namespace (SubjectAccessReview). Default: no one. */
  readonly secretAccess?: (namespace: string, serviceAccount: string) => Promise<boolean>;
  /** Opens /debug/* to remote clients presenting it as a bearer token. */
  readonly debugToken?: string;
}

export interface SecurityStatus {
  readonly transport: 'tls' | 'plaintext';
  readonly clientCertificates: boolean;
  readonly authentication: readonly string[];
  readonly anonymousAllowed: boolean;
  readonly secrets: 'kubernetes' | 'not served (no Kubernetes access configured)';
  readonly certificate?: { readonly fingerprint: string; readonly notAfter: string };
  readonly warning?: string;
}

export const INSECURE_WARNING =
  'INSECURE: the xDS port is plaintext or accepts unauthenticated proxies; any client that reaches it can read every proxy class\u2019s configuration and claim any node id';

export class RelaySecurity {
  readonly provider: TlsFileProvider | undefined;
  readonly authenticators: readonly Authenticator[];
  readonly insecure: boolean;
  private readonly access = new LRUCache<string, Promise<boolean>>({ max: 10_000, ttl: 60_000 });

  constructor(
    readonly options: RelaySecurityOptions,
    private readonly secrets: SecretResolver | undefined,
    tlsEvents: TlsReloadEvents = {},
  ) {
    if (!options.tls && !options.insecure)
      throw new Error('the relay needs TLS (a certificate and key) or an explicit insecure mode');
    this.insecure = options.insecure === true;
    this.provider = options.tls ? new TlsFileProvider(options.tls, options.tls.reloadMs ?? 5000, tlsEvents) : undefined;
    this.authenticators = [
      ...(options.tls?.clientCaFile !== undefined ? [mtlsAuthenticator] : []),
      ...(options.authenticators ?? []),
    ];
    if (!this.insecure && this.authenticators.length === 0)
      throw new Error(
        'no way to authenticate proxies: give a client CA (mTLS) or a token authenticator, or run insecure',
      );
  }

  /** grpc-js credentials for the xDS port: TLS from the reloading provider, or plaintext. */
  serverCredentials(): grpc.ServerCredentials {
    const p = this.provider;
    if (!p) return grpc.ServerCredentials.createInsecure();
    // grpc-js 1.14 reads its first argument as the identity (certificate + key) provider and the
    // second as the client CA provider, whatever its typings name them; one provider serves both.
    return grpc.experimental.createCertificateProviderServerCredentials(
      p,
      p.files.clientCaFile !== undefined ? p : null,
      false,
    );
  }

  /** The xDS server's view: admission of each stream, and the secrets it may be served. */
  xdsSecurity(): XdsSecurity {
    return {
      admit: async (creds): Promise<Admission> => {
        const outcome = await authenticate(this.authenticators, creds, this.insecure);
        if (outcome.kind === 'refused') return { ok: false, reason: outcome.reason };
        if (outcome.kind === 'anonymous') return { ok: true, mayReadKeys: false };
        const id = outcome.identity;
        return { ok: true, identity: id, mayReadKeys: await this.mayReadKeys(id.namespace, id.serviceAccount) };
      },
      ...(this.secrets ? { secrets: this.secrets } : {}),
    };
  }

  status(): SecurityStatus {
    const cert = this.provider?.current;
    return {
      transport: this.provider ? 'tls' : 'plaintext',
      clientCertificates: this.options.tls?.clientCaFile !== undefined,
      authentication: this.authenticators.map((a) => a.name),
      anonymousAllowed: this.insecure,
      secrets: this.secrets ? 'kubernetes' : 'not served (no Kubernetes access configured)',
      ...(cert ? { certificate: { fingerprint: cert.fingerprint, notAfter: cert.notAfter } } : {}),
      ...(this.insecure ? { warning: INSECURE_WARNING } : {}),
    };
  }

  private mayReadKeys(namespace: string, serviceAccount: string): Promise<boolean> {
    const check = this.options.secretAccess;
    if (!this.secrets || !check) return Promise.resolve(false);
    const key = `${namespace}/${serviceAccount}`;
    let answer = this.access.get(key);
    if (!answer) {
      answer = check(namespace, serviceAccount).catch(() => {
        this.access.delete(key); // an unanswered review is not a refusal to remember
        return false;
      });
      this.access.set(key, answer);
    }
    return answer;
  }
}

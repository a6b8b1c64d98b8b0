/**
 * The relay's TLS certificate, key and client CA read from PEM files and re-read when they change,
 * as cert-manager, istio-csr or a mounted Secret rotate them. A grpc-js CertificateProvider: the
 * server swaps its secure context for new handshakes; connections already open keep theirs.
 *
 * A rotation is taken only once the files agree (the key matches the certificate, every PEM
 * parses): a half-written rotation keeps the last good pair served, and says so once.
 */
import { createHash, createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { experimental } from '@grpc/grpc-js';

type CertificateProvider = experimental.CertificateProvider;
type CaListener = experimental.CaCertificateUpdateListener;
type IdentityListener = experimental.IdentityCertificateUpdateListener;

export interface TlsFiles {
  readonly certFile: string;
  readonly keyFile: string;
  /** Client CA bundle: with it, client certificates are requested and verified (mTLS). */
  readonly clientCaFile?: string;
}

export interface TlsMaterial {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly ca?: Buffer;
  /** The serving certificate's SHA-256 fingerprint (logs, /readyz). */
  readonly fingerprint: string;
  readonly notAfter: string;
}

/** Reads and checks the files; throws with the file's name when one is unusable. */
export function readTlsFiles(files: TlsFiles, read: (path: string) => Buffer = readFileSync): TlsMaterial {
  const load = (path: string): Buffer => {
    try {
      return read(path);
    } catch (e) {
      throw new Error(`${path}: ${e instanceof Error ? e.message : String(e)}`);
    }
  };
  const cert = load(files.certFile);
  const key = load(files.keyFile);
  const ca = files.clientCaFile !== undefined ? load(files.clientCaFile) : undefined;
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(cert);
  } catch (e) {
    throw new Error(`${files.certFile}: not a PEM certificate: ${(e as Error).message}`);
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch (e) {
    throw new Error(`${files.keyFile}: not a PEM private key: ${(e as Error).message}`);
  }
  if (!leaf.checkPrivateKey(privateKey)) throw new Error(`${files.keyFile} is not the key of ${files.certFile}`);
  if (ca !== undefined) {
    try {
      new X509Certificate(ca);
    } catch (e) {
      throw new Error(`${files.clientCaFile}: not a PEM certificate: ${(e as Error).message}`);
    }
  }
  return {
    cert,
    key,
    ...(ca !== undefined ? { ca } : {}),
    fingerprint: leaf.fingerprint256,
    notAfter: new Date(leaf.validTo).toISOString(),
  };
}

export interface TlsReloadEvents {
  readonly onReload?: (m: TlsMaterial) => void;
  readonly onError?: (error: string) => void;
}

/** Serves the files to grpc-js and polls them every `intervalMs` for a change. */
export class TlsFileProvider implements CertificateProvider {
  private material: TlsMaterial;
  private digest: string;
  private timer: NodeJS.Timeout | undefined;
  private lastError: string | undefined;
  private readonly caListeners = new Set<CaListener>();
  private readonly identityListeners = new Set<IdentityListener>();

  constructor(
    readonly files: TlsFiles,
    private readonly intervalMs: number,
    private readonly events: TlsReloadEvents = {},
  ) {
    // The first read throws: a relay does not start without its certificate.
    this.material = readTlsFiles(files);
    this.digest = digestOf(this.material);
  }

  get current(): TlsMaterial {
    return this.material;
  }

  /** Re-reads the files now; true when a new, valid set was taken. */
  check(): boolean {
    let next: TlsMaterial;
    try {
      next = readTlsFiles(this.files);
    } catch (e) {
      const error = (e as Error).message;
      if (error !== this.lastError) this.events.onError?.(error);
      this.lastError = error;
      return false;
    }
    this.lastError = undefined;
    const digest = digestOf(next);
    if (digest === this.digest) return false;
    this.material = next;
    this.digest = digest;
    for (const l of this.identityListeners) l({ certificate: next.cert, privateKey: next.key });
    if (next.ca) for (const l of this.caListeners) l({ caCertificate: next.ca });
    this.events.onReload?.(next);
    return true;
  }

  addCaCertificateListener(listener: CaListener): void {
    this.caListeners.add(listener);
    this.watch();
    const ca = this.material.ca;
    process.nextTick(() => listener(ca ? { caCertificate: ca } : null));
  }

  removeCaCertificateListener(listener: CaListener): void {
    this.caListeners.delete(listener);
    this.unwatch();
  }

  addIdentityCertificateListener(listener: IdentityListener): void {
    this.identityListeners.add(listener);
    this.watch();
    const m = this.material;
    process.nextTick(() => listener({ certificate: m.cert, privateKey: m.key }));
  }

  removeIdentityCertificateListener(listener: IdentityListener): void {
    this.identityListeners.delete(listener);
    this.unwatch();
  }

  private watch(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.check(), this.intervalMs);
    this.timer.unref();
  }

  private unwatch(): void {
    if (this.caListeners.size > 0 || this.identityListeners.size > 0 || !this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
  }
}

const digestOf = (m: TlsMaterial): string =>
  createHash('sha256')
    .update(m.cert)
    .update('\0')
    .update(m.key)
    .update('\0')
    .update(m.ca ?? '')
    .digest('hex');

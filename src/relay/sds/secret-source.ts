/**
 * Where the relay reads gateway credentials: Kubernetes Secrets, held in memory and kept current by
 * one watch per namespace. A namespace is watched from the first time an authenticated proxy of
 * that namespace asks for one of its Secrets (or from the start, for `namespaces`), so RBAC can be
 * limited to the gateways' namespaces.
 */

/** What the relay keeps of a Secret: its data and what identifies this revision of it. */
export interface HeldSecret {
  readonly data: Readonly<Record<string, Buffer>>;
  /** Changes whenever the Secret changes (uid + resourceVersion): the SDS per-resource version. */
  readonly revision: string;
}

export interface SecretSource {
  /** The Secret as last seen; undefined when it does not exist or its namespace is not synced yet. */
  get(namespace: string, name: string): HeldSecret | undefined;
  /** Starts watching a namespace if it is not watched yet; false when it may not be watched. */
  watch(namespace: string): boolean;
  /** Called with namespace and name after every change (and for each Secret of a first list). */
  onChange(listener: (namespace: string, name: string) => void): void;
  close(): Promise<void>;
}

/** A SecretSource held in memory: for tests and for callers that feed Secrets themselves. */
export class MemorySecretSource implements SecretSource {
  private readonly secrets = new Map<string, HeldSecret>();
  private readonly listeners: ((namespace: string, name: string) => void)[] = [];
  readonly watched = new Set<string>();

  get(namespace: string, name: string): HeldSecret | undefined {
    return this.secrets.get(`${namespace}/${name}`);
  }

  watch(namespace: string): boolean {
    this.watched.add(namespace);
    return true;
  }

  onChange(listener: (namespace: string, name: string) => void): void {
    this.listeners.push(listener);
  }

  set(namespace: string, name: string, secret: HeldSecret | undefined): void {
    if (secret) this.secrets.set(`${namespace}/${name}`, secret);
    else this.secrets.delete(`${namespace}/${name}`);
    for (const l of this.listeners) l(namespace, name);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

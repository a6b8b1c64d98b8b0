/**
 * Which SDS resources a proxy gets, after istiod's SecretGen (pilot/pkg/xds/sds.go):
 * - only an authenticated proxy gets any (an anonymous one, under `--insecure`, gets none);
 * - `kubernetes://` names, resolved in the proxy's namespace unless they name one: a Secret of
 *   another namespace is refused; in its own namespace, a `-cacert` (CA only) is served to any
 *   authenticated proxy, a certificate with its key only to an identity allowed to read Secrets
 *   there (istiod asks a SubjectAccessReview: may `<sa>` list secrets in `<ns>`; see `secretAccess`);
 * - `kubernetes-gateway://<ns>/<name>` names (Gateway API certificateRefs) only when the proxy's
 *   class lists them as verified (istiod's VerifiedCertificateReferences: its Gateway references
 *   the Secret, in the same namespace or under a ReferenceGrant); no SubjectAccessReview then, and
 *   another namespace is fine once verified;
 * - any other form is refused.
 * Unknown or malformed Secrets are simply not served (the proxy waits for them, as with istiod).
 */
import { createHash } from 'node:crypto';
import type { ServedResource } from '../types.js';
import type { ProxyIdentity } from '../security/identity.js';
import { caSecret, tlsCertificateSecret } from './secret-material.js';
import { CA_SUFFIX, parseGatewaySecretName, parseSecretName, type SecretRef } from './secret-name.js';
import type { HeldSecret, SecretSource } from './secret-source.js';

export interface SecretCaller {
  readonly identity: ProxyIdentity | undefined;
  /** May this identity read certificates and keys of its namespace (SubjectAccessReview). */
  readonly mayReadKeys: boolean;
  /** The `kubernetes-gateway://` names the proxy's class may be served (the compile verified them; absent: none). */
  readonly verifiedSecrets?: ReadonlySet<string>;
}

export interface Resolved {
  readonly resources: ReadonlyMap<string, ServedResource>;
  /** Names refused, with why (for the log and the audit; never the Secret's content). */
  readonly denied: readonly { readonly name: string; readonly reason: string }[];
}

export class SecretResolver {
  private readonly cache = new Map<string, { revision: string; resource: ServedResource | undefined }>();

  constructor(
    readonly source: SecretSource,
    private readonly onInvalid: (ref: SecretRef, reason: string) => void = () => {},
  ) {}

  resolve(caller: SecretCaller, names: readonly string[]): Resolved {
    const resources = new Map<string, ServedResource>();
    const denied: { name: string; reason: string }[] = [];
    const identity = caller.identity;
    if (!identity) {
      for (const name of names) denied.push({ name, reason: 'the proxy is not authenticated' });
      return { resources, denied };
    }
    for (const name of names) {
      const admitted = this.admit(caller, identity, name);
      if (typeof admitted === 'string') {
        denied.push({ name, reason: admitted });
        continue;
      }
      const r = this.resource(admitted);
      if (r) resources.set(name, r);
    }
    return { resources, denied };
  }

  /** The Secret this caller may have under a name, or why it may not. */
  private admit(caller: SecretCaller, identity: ProxyIdentity, name: string): SecretRef | string {
    const gatewayRef = parseGatewaySecretName(name);
    if (gatewayRef) {
      if (!caller.verifiedSecrets?.has(name))
        return `${name} is not a certificate reference verified for this proxy's Gateway`;
      return this.watchable(gatewayRef);
    }
    const ref = parseSecretName(name, identity.namespace);
    if (!ref) return 'not a kubernetes:// or kubernetes-gateway://<namespace>/<name> secret name this relay serves';
    if (ref.namespace !== identity.namespace)
      return `secret of namespace ${ref.namespace}, proxy of ${identity.namespace}`;
    if (!ref.caOnly && !caller.mayReadKeys) return `${identity.principal} may not read secrets in ${ref.namespace}`;
    return this.watchable(ref);
  }

  private watchable(ref: SecretRef): SecretRef | string {
    return this.source.watch(ref.namespace) ? ref : `namespace ${ref.namespace} is not one this relay may watch`;
  }

  private resource(ref: SecretRef): ServedResource | undefined {
    // istiod's GetCaCert: `<name>-cacert` itself, else the Secret without the suffix.
    const held: HeldSecret | undefined = ref.caOnly
      ? (this.source.get(ref.namespace, ref.name) ??
        this.source.get(ref.namespace, ref.name.slice(0, -CA_SUFFIX.length)))
      : this.source.get(ref.namespace, ref.name);
    if (!held) return undefined;
    const key = `${ref.caOnly ? 'ca' : 'tls'} ${ref.namespace}/${ref.name}\0${ref.resourceName}`;
    const hit = this.cache.get(key);
    if (hit && hit.revision === held.revision) return hit.resource;
    const material = ref.caOnly
      ? caSecret(ref.resourceName, held.data)
      : tlsCertificateSecret(ref.resourceName, held.data);
    let resource: ServedResource | undefined;
    if (material.ok) {
      // The version names the Secret's revision, never its content.
      const digest = createHash('sha256').update(`${ref.resourceName}\0${held.revision}`).digest('hex').slice(0, 16);
      resource = Object.freeze({ name: ref.resourceName, digest, bytes: material.bytes });
    } else this.onInvalid(ref, material.reason);
    this.cache.set(key, { revision: held.revision, resource });
    return resource;
  }
}

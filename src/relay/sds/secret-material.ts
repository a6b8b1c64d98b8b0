/**
 * An Envoy `Secret` from a Kubernetes Secret's data, as istiod builds it (pilot/pkg/xds/sds.go,
 * pilot/pkg/credentials/kube/secrets.go): `cert`/`key` (generic) or `tls.crt`/`tls.key` (TLS
 * Secret) become a `tls_certificate` with inline bytes (plus `tls.ocsp-staple`); for a `-cacert`
 * name, `cacert` or `ca.crt` becomes a `validation_context` with `trusted_ca` (plus `crl`/`ca.crl`).
 * The bytes live only in the relay's memory: never in a snapshot, the store or the audit log.
 */
import { encodeMessage } from '../../xds/proto.js';

export const SECRET_TYPE_NAME = 'envoy.extensions.transport_sockets.tls.v3.Secret';
export const SECRET_TYPE_URL = `type.googleapis.com/${SECRET_TYPE_NAME}`;

/** Secret `data`, values decoded from base64. */
export type SecretData = Readonly<Record<string, Buffer>>;

export type Material =
  { readonly ok: true; readonly bytes: Uint8Array } | { readonly ok: false; readonly reason: string };

const has = (d: SecretData, ...keys: string[]): boolean => keys.every((k) => k in d);
const hasValue = (d: SecretData, ...keys: string[]): boolean => keys.every((k) => (d[k]?.length ?? 0) > 0);
const inline = (b: Buffer): { inline_bytes: Buffer } => ({ inline_bytes: b });

/** The TLS certificate and key (istiod: ExtractCertInfo). */
export function tlsCertificateSecret(resourceName: string, data: SecretData): Material {
  let cert: Buffer, key: Buffer;
  let staple: Buffer | undefined;
  if (hasValue(data, 'cert', 'key')) [cert, key] = [data.cert as Buffer, data.key as Buffer];
  else if (hasValue(data, 'tls.crt', 'tls.key')) {
    [cert, key] = [data['tls.crt'] as Buffer, data['tls.key'] as Buffer];
    staple = data['tls.ocsp-staple'];
  } else if (has(data, 'cert', 'key')) return { ok: false, reason: 'found keys "cert" and "key", but they were empty' };
  else if (has(data, 'tls.crt', 'tls.key'))
    return { ok: false, reason: 'found keys "tls.crt" and "tls.key", but they were empty' };
  else
    return {
      ok: false,
      reason: `found secret, but didn't have expected keys (cert and key) or (tls.crt and tls.key); found: ${keysMessage(data)}`,
    };
  const bytes = encodeMessage(SECRET_TYPE_NAME, {
    name: resourceName,
    tls_certificate: {
      certificate_chain: inline(cert),
      private_key: inline(key),
      ...(staple && staple.length > 0 ? { ocsp_staple: inline(staple) } : {}),
    },
  });
  return { ok: true, bytes };
}

/** The CA certificate (istiod: ExtractRoot). */
export function caSecret(resourceName: string, data: SecretData): Material {
  let ca: Buffer;
  let crl: Buffer | undefined;
  if (hasValue(data, 'cacert')) [ca, crl] = [data.cacert as Buffer, data.crl];
  else if (hasValue(data, 'ca.crt')) [ca, crl] = [data['ca.crt'] as Buffer, data['ca.crl']];
  else if (has(data, 'cacert')) return { ok: false, reason: 'found key "cacert", but it was empty' };
  else if (has(data, 'ca.crt')) return { ok: false, reason: 'found key "ca.crt", but it was empty' };
  else
    return {
      ok: false,
      reason: `found secret, but didn't have expected keys cacert or ca.crt; found: ${keysMessage(data)}`,
    };
  const bytes = encodeMessage(SECRET_TYPE_NAME, {
    name: resourceName,
    validation_context: { trusted_ca: inline(ca), ...(crl && crl.length > 0 ? { crl: inline(crl) } : {}) },
  });
  return { ok: true, bytes };
}

function keysMessage(data: SecretData): string {
  const keys = Object.keys(data).sort();
  return keys.length < 3 ? keys.join(', ') : `${keys.slice(0, 3).join(', ')}, and ${keys.length - 3} more...`;
}

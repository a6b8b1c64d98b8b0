/**
 * MeshConfig's TLS settings, as istiod validates them (pkg/config/validation/agent
 * ValidateMeshTLSConfig, ValidateMeshTLSDefaults) and reads them (MeshConfig.TLSConfig):
 *  - `meshMTLS`: `minProtocolVersion` and `cipherSuites` of the Istio mTLS servers (inbound
 *    chains); `ecdhCurves` is refused ("mesh TLS does not support ECDH curves configuration").
 *  - `tlsDefaults`: `ecdhCurves`, `cipherSuites` and `minProtocolVersion` of the TLS servers istiod
 *    builds from Gateway / Sidecar settings, the curves and cipher suites of SIMPLE / MUTUAL
 *    originations. Unrecognized and repeated curves are warnings (kept as written, as istiod).
 * `minProtocolVersion` is TLS_AUTO, TLSV1_2 or TLSV1_3 (istiod does not load a mesh config with
 * another). istiod checks no cipher suite names here and serves them as written: a name Envoy does
 * not know makes it reject the TLS context, so meshsnap warns and keeps them, as istiod.
 */
import type { MeshConfig, MeshTlsConfig } from '../../model/mesh-config.js';
import { isValidCipherSuite } from './gateway.js';
import { fields, get, str, strList, type Raw, type Reader } from './reader.js';

export const MESH_TLS_FIELDS = ['meshMTLS', 'tlsDefaults'];

/** Bounds: entries per list and characters per entry. */
export const MAX_MESH_TLS_LIST = 64;
export const MAX_MESH_TLS_NAME = 256;

const VERSIONS = ['TLS_AUTO', 'TLSV1_2', 'TLSV1_3'];

/** pkg/config/security ValidECDHCurves (BoringSSL's names). */
const VALID_ECDH_CURVES = new Set([
  'P-224',
  'P-256',
  'P-521',
  'P-384',
  'X25519',
  'X25519Kyber768Draft00',
  'X25519MLKEM768',
]);

export function readMeshTls(
  r: Reader,
  o: Raw,
  at: (k: string) => string,
): Pick<MeshConfig, 'meshMTLS' | 'tlsDefaults'> {
  const meshMTLS = tlsConfig(r, get(o, 'meshMTLS'), at('meshMTLS'), false);
  const tlsDefaults = tlsConfig(r, get(o, 'tlsDefaults'), at('tlsDefaults'), true);
  return { ...(meshMTLS ? { meshMTLS } : {}), ...(tlsDefaults ? { tlsDefaults } : {}) };
}

function tlsConfig(r: Reader, v: unknown, path: string, curves: boolean): MeshTlsConfig | undefined {
  const o = fields(r, v, path, ['minProtocolVersion', 'ecdhCurves', 'cipherSuites']);
  if (!o) return undefined;
  const version = str(r, get(o, 'minProtocolVersion'), `${path}.minProtocolVersion`);
  if (version !== undefined && !VERSIONS.includes(version))
    r.error(`${path}.minProtocolVersion`, `must be TLS_AUTO, TLSV1_2 or TLSV1_3, got "${version.slice(0, 40)}"`);
  const ecdhCurves = names(r, get(o, 'ecdhCurves'), `${path}.ecdhCurves`);
  if (ecdhCurves?.length && !curves)
    r.error(`${path}.ecdhCurves`, 'mesh TLS does not support ECDH curves configuration (istiod)');
  if (ecdhCurves?.length && curves) checkCurves(r, ecdhCurves, `${path}.ecdhCurves`);
  const cipherSuites = names(r, get(o, 'cipherSuites'), `${path}.cipherSuites`);
  const unknown = [...new Set(cipherSuites?.filter((cs) => !isValidCipherSuite(cs)))].sort();
  if (unknown.length)
    r.warn(
      `${path}.cipherSuites`,
      `unrecognized cipher suites ${unknown.join(', ').slice(0, 200)}: istiod serves them as written, and Envoy rejects a TLS context with a cipher it does not know`,
      'invalid-cipher-suite',
    );
  const out: { -readonly [K in keyof MeshTlsConfig]: MeshTlsConfig[K] } = {};
  if (version === 'TLSV1_2' || version === 'TLSV1_3') out.minProtocolVersion = version;
  if (ecdhCurves?.length && curves) out.ecdhCurves = ecdhCurves;
  if (cipherSuites?.length) out.cipherSuites = cipherSuites;
  return Object.keys(out).length ? out : undefined;
}

/** istiod's ValidateMeshTLSDefaults: warnings only; the curves are served as written. */
function checkCurves(r: Reader, curves: readonly string[], path: string): void {
  const seen = new Set<string>();
  const unknown = new Set<string>();
  const repeated = new Set<string>();
  for (const c of curves) {
    if (c !== '' && !VALID_ECDH_CURVES.has(c)) unknown.add(c);
    else if (seen.has(c)) repeated.add(c);
    else seen.add(c);
  }
  const list = (s: Set<string>) => [...s].sort().join(', ').slice(0, 200);
  if (unknown.size)
    r.warn(
      path,
      `detected unrecognized ECDH curves: ${list(unknown)} (istiod serves them as written; Envoy rejects a TLS context with a curve it does not know)`,
      'invalid-ecdh-curve',
    );
  if (repeated.size) r.warn(path, `detected duplicate ECDH curves: ${list(repeated)}`, 'invalid-ecdh-curve');
}

function names(r: Reader, v: unknown, path: string): string[] | undefined {
  const list = strList(r, v, path, MAX_MESH_TLS_LIST);
  list?.forEach((s, i) => {
    if (s.length > MAX_MESH_TLS_NAME) r.error(`${path}[${i}]`, `is longer than ${MAX_MESH_TLS_NAME} characters`);
  });
  return list;
}

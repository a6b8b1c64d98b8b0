/**
 * Test certificates made with the openssl command line (node:crypto makes keys but not X.509
 * certificates): a CA and leaves with SPIFFE URI, DNS and IP SANs, EC P-256 for speed.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Issued {
  readonly certFile: string;
  readonly keyFile: string;
  readonly cert: Buffer;
  readonly key: Buffer;
}

export interface TestCa extends Issued {
  /** A leaf signed by this CA. */
  issue(name: string, sans: { readonly uri?: string; readonly dns?: string[]; readonly ip?: string[] }): Issued;
}

const openssl = (args: string[]): void => {
  execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'], timeout: 20_000 });
};
const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

export function makeCa(dir: string, name = 'test-ca'): TestCa {
  const certFile = join(dir, `${name}.crt`);
  const keyFile = join(dir, `${name}.key`);
  openssl([
    'req',
    '-x509',
    ...EC,
    '-keyout',
    keyFile,
    '-out',
    certFile,
    '-days',
    '2',
    '-subj',
    `/CN=${name}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  return {
    certFile,
    keyFile,
    cert: readFileSync(certFile),
    key: readFileSync(keyFile),
    issue(leaf, sans) {
      const leafCert = join(dir, `${leaf}.crt`);
      const leafKey = join(dir, `${leaf}.key`);
      const csr = join(dir, `${leaf}.csr`);
      const ext = join(dir, `${leaf}.ext`);
      const alt = [
        ...(sans.uri ? [`URI:${sans.uri}`] : []),
        ...(sans.dns ?? []).map((d) => `DNS:${d}`),
        ...(sans.ip ?? []).map((i) => `IP:${i}`),
      ];
      writeFileSync(
        ext,
        [
          'basicConstraints=CA:FALSE',
          'keyUsage=critical,digitalSignature,keyEncipherment',
          'extendedKeyUsage=serverAuth,clientAuth',
          ...(alt.length ? [`subjectAltName=${alt.join(',')}`] : []),
        ].join('\n'),
      );
      openssl(['req', '-new', ...EC, '-keyout', leafKey, '-out', csr, '-subj', `/CN=${leaf}`]);
      openssl([
        'x509',
        '-req',
        '-in',
        csr,
        '-CA',
        certFile,
        '-CAkey',
        keyFile,
        '-CAcreateserial',
        '-out',
        leafCert,
        '-days',
        '2',
        '-sha256',
        '-extfile',
        ext,
      ]);
      return { certFile: leafCert, keyFile: leafKey, cert: readFileSync(leafCert), key: readFileSync(leafKey) };
    },
  };
}

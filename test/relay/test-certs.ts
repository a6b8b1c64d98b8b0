/** A throwaway CA and workload certificates (SPIFFE URI SANs, as Istio issues them), made with the openssl CLI. */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface IssuedCert {
  readonly certificateFile: string;
  readonly privateKeyFile: string;
  readonly caCertificateFile: string;
}

const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });

export function makeCa(dir: string): string {
  const key = join(dir, 'ca.key');
  const crt = join(dir, 'ca.crt');
  openssl(
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'].concat([
      '-keyout',
      key,
      '-out',
      crt,
      '-days',
      '1',
      '-subj',
      '/CN=meshsnap-test-ca',
    ]),
  );
  return crt;
}

/** A certificate for `name` signed by the CA in `dir`, with the SANs given (e.g. `URI:spiffe://…`, `DNS:…`). */
export function issue(dir: string, name: string, sans: readonly string[]): IssuedCert {
  const key = join(dir, `${name}.key`);
  const csr = join(dir, `${name}.csr`);
  const crt = join(dir, `${name}.crt`);
  const ext = join(dir, `${name}.ext`);
  writeFileSync(ext, `subjectAltName=${sans.join(',')}\n`);
  openssl([
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    key,
    '-out',
    csr,
    '-subj',
    `/CN=${name}`,
  ]);
  openssl(
    ['x509', '-req', '-in', csr, '-CA', join(dir, 'ca.crt'), '-CAkey', join(dir, 'ca.key'), '-CAcreateserial'].concat([
      '-out',
      crt,
      '-days',
      '1',
      '-extfile',
      ext,
    ]),
  );
  return { certificateFile: crt, privateKeyFile: key, caCertificateFile: join(dir, 'ca.crt') };
}

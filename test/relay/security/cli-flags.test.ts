/**
 * `meshsnap relay`'s security flags: every combination that would leave the xDS port open without
 * the operator saying so is a usage error naming the flag; valid ones become the relay's options.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UsageError } from '../../../src/cli/args.js';
import { relaySecurity } from '../../../src/cli/relay-security.js';
import { silentLogger } from '../../../src/relay/log.js';

test('relay security flags: refusals name the flag; --insecure and TLS setups', async () => {
  const refused: [Parameters<typeof relaySecurity>[0], RegExp][] = [
    [{}, /give --tls-cert and --tls-key .* or run plaintext with --insecure/],
    [{ 'tls-cert': 'c.pem' }, /--tls-cert and --tls-key go together/],
    [{ insecure: true, 'client-ca': 'ca.pem' }, /--client-ca needs --tls-cert and --tls-key/],
    [{ 'tls-cert': 'c.pem', 'tls-key': 'k.pem' }, /no way to authenticate proxies: add --client-ca .* or --kube/],
    [{ insecure: true, jwt: 'maybe' }, /--jwt: "maybe" is not review, jwks or off/],
    [{ insecure: true, jwt: 'jwks' }, /--jwt jwks needs --jwt-issuer URL, or --kube/],
    [{ insecure: true, sds: 'yes' }, /--sds: "yes" is not on or off/],
  ];
  for (const [flags, message] of refused)
    await assert.rejects(relaySecurity(flags, silentLogger, {}), (e: unknown) => {
      assert.ok(e instanceof UsageError, JSON.stringify(flags));
      assert.match(e.message, message);
      return true;
    });

  const insecure = await relaySecurity({ insecure: true }, silentLogger, { MESHSNAP_RELAY_DEBUG_TOKEN: 't0k' });
  assert.deepEqual(insecure, { security: { insecure: true, authenticators: [], debugToken: 't0k' } });

  const mtls = await relaySecurity(
    { 'tls-cert': 'c.pem', 'tls-key': 'k.pem', 'client-ca': 'ca.pem', 'tls-reload-ms': '250' },
    silentLogger,
    {},
  );
  assert.deepEqual(mtls.security.tls, { certFile: 'c.pem', keyFile: 'k.pem', clientCaFile: 'ca.pem', reloadMs: 250 });
  assert.equal(mtls.security.insecure, false);
  assert.equal(mtls.secrets, undefined, 'no Kubernetes: no secrets source');

  const jwks = await relaySecurity(
    { 'tls-cert': 'c.pem', 'tls-key': 'k.pem', jwt: 'jwks', 'jwt-issuer': 'https://issuer.example' },
    silentLogger,
    {},
  );
  assert.deepEqual(
    jwks.security.authenticators?.map((a) => a.name),
    ['Kubernetes service-account token (JWKS)'],
  );
});

/**
 * Gateway validation, with cases restated from istiod's pkg/config/validation tests (ValidateGateway,
 * validateServer, validateServerPort, validateTLSOptions).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { retainedForStorage } from '../../src/inputs/retain.js';
import { resolveGatewayRef } from '../../src/model/gateway.js';
import { errors, loadText } from './helpers.js';

const gateway = (servers: string, name = 'gw', versionLine = 'networking.istio.io/v1'): string =>
  `apiVersion: ${versionLine}\nkind: Gateway\nmetadata: {name: ${name}, namespace: istio-system}\nspec:\n  selector: {istio: ingressgateway}\n  servers:\n${servers}`;

const server = (port: string, hosts = '["foo.bar.com"]', tls = ''): string =>
  `  - port: ${port}\n    hosts: ${hosts}\n${tls ? `    tls: ${tls}\n` : ''}`;

const HTTP = '{number: 80, name: http, protocol: HTTP}';
const HTTPS = '{number: 443, name: https, protocol: HTTPS}';

function check(text: string): { valid: boolean; messages: string[]; warnings: string[] } {
  const inputs = loadText(text, 'gw.yaml');
  return {
    valid: inputs.gateways.length === 1,
    messages: errors(inputs).map((d) => `${d.field ?? ''}: ${d.message}`),
    warnings: inputs.diagnostics.filter((d) => d.severity === 'warning').map((d) => `${d.field ?? ''}: ${d.message}`),
  };
}

test('every networking version reads a Gateway; its selector and servers are kept', () => {
  for (const v of ['networking.istio.io/v1', 'networking.istio.io/v1beta1', 'networking.istio.io/v1alpha3']) {
    const inputs = loadText(gateway(server(HTTP), 'gw', v));
    assert.deepEqual(errors(inputs), []);
    assert.equal(inputs.gateways[0]?.apiVersion, v);
    assert.deepEqual(inputs.gateways[0]?.spec.selector, { istio: 'ingressgateway' });
    assert.deepEqual(inputs.gateways[0]?.spec.servers[0]?.port, { number: 80, name: 'http', protocol: 'HTTP' });
  }
});

test('names, servers, hosts and ports are checked as istiod checks them', () => {
  const invalid: [string, RegExp][] = [
    [gateway(server(HTTP), 'a.b'), /DNS-1123 label/],
    [
      'apiVersion: networking.istio.io/v1\nkind: Gateway\nmetadata: {name: gw}\nspec: {servers: []}',
      /at least one server/,
    ],
    [gateway(server(HTTP, '[]')), /at least one host/],
    [gateway(server(HTTP, '["foo"]')), /short names/],
    [gateway(server(HTTP, '["*foo.bar.com"]')), /partial wildcards/],
    [gateway(server(HTTP, '["Bad_NS/foo.bar.com"]')), /invalid namespace/],
    [gateway(server(HTTP, '["/foo.bar.com"]')), /cannot be empty/],
    [gateway(server('{number: 80, name: http, protocol: SCTP}')), /invalid protocol/],
    [gateway(server('{number: 0, name: http, protocol: HTTP}')), /port.number/],
    [gateway(server('{number: 80, protocol: HTTP}')), /port name must be set/],
    [gateway(server('{number: 80, name: http, protocol: HTTP, targetPort: 8080}')), /targetPort has no impact/],
    [
      gateway(server(HTTP) + server('{number: 81, name: http, protocol: HTTP}')),
      /port names in servers must be unique/,
    ],
    [gateway(server(HTTPS)), /must have TLS settings for HTTPS\/TLS/],
    [gateway(server(HTTP, undefined, '{mode: SIMPLE, credentialName: x}')), /plain text HTTP ports/],
    [
      gateway(server('{number: 31400, name: tcp, protocol: TCP}', undefined, '{mode: SIMPLE, credentialName: x}')),
      /non HTTPS\/TLS ports/,
    ],
  ];
  for (const [text, message] of invalid) {
    const r = check(text);
    assert.equal(r.valid, false, text);
    assert.ok(
      r.messages.some((m) => message.test(m)),
      `${text}\n${JSON.stringify(r.messages)}`,
    );
  }
  for (const hosts of ['["*"]', '["*/*"]', '["./foo.bar.com"]', '["ns1/*.bar.com"]', '["10.0.0.1"]', '["*.bar.com"]'])
    assert.deepEqual(check(gateway(server(HTTP, hosts))).messages, [], hosts);
});

test('TLS settings: what each mode requires and forbids', () => {
  const tls = (settings: string) => check(gateway(server(HTTPS, undefined, settings)));
  assert.equal(tls('{mode: SIMPLE, credentialName: cert}').valid, true);
  assert.equal(tls('{mode: SIMPLE, serverCertificate: /c.pem, privateKey: /k.pem}').valid, true);
  assert.match(tls('{mode: SIMPLE, serverCertificate: /c.pem}').messages.join(), /requires a private key/);
  assert.match(
    tls('{mode: MUTUAL, serverCertificate: /c.pem, privateKey: /k.pem}').messages.join(),
    /client CA bundle/,
  );
  assert.equal(tls('{mode: MUTUAL, credentialName: cert}').valid, true);
  assert.equal(tls('{mode: OPTIONAL_MUTUAL, serverCertificate: /c, privateKey: /k, caCertificates: /ca}').valid, true);
  assert.match(tls('{mode: ISTIO_MUTUAL, credentialName: cert}').messages.join(), /ISTIO_MUTUAL TLS cannot have/);
  assert.match(
    tls('{mode: SIMPLE, credentialName: c, serverCertificate: /c, privateKey: /k}').messages.join(),
    /only one of credentialName/,
  );
  assert.match(
    tls('{mode: SIMPLE, serverCertificate: /c, privateKey: /k, caCrl: /crl}').messages.join(),
    /CRL is not supported with SIMPLE/,
  );
  assert.match(tls('{mode: SOMETIMES}').messages.join(), /unknown value/);
  // Several certificates: credentialNames or tlsCertificates, never two sources at once.
  assert.equal(tls('{mode: SIMPLE, credentialNames: [rsa, ecdsa]}').valid, true);
  assert.match(tls('{mode: SIMPLE, credentialName: a, credentialNames: [b]}').messages.join(), /only one of/);
  assert.match(
    tls('{mode: ISTIO_MUTUAL, credentialNames: [b]}').messages.join(),
    /cannot have associated credentialNames/,
  );
  assert.equal(tls('{mode: SIMPLE, tlsCertificates: [{serverCertificate: /a.crt, privateKey: /a.key}]}').valid, true);
  assert.match(
    tls('{mode: MUTUAL, tlsCertificates: [{serverCertificate: /a.crt, privateKey: /a.key}]}').messages.join(),
    /client CA bundle/,
  );
  assert.match(
    tls('{mode: SIMPLE, tlsCertificates: [{serverCertificate: /a.crt}]}').messages.join(),
    /private key is required/,
  );
  // Passthrough ignores certificates, with a warning; an absent mode is PASSTHROUGH.
  assert.match(tls('{mode: PASSTHROUGH, credentialName: c}').warnings.join(), /does not use certificates/);
  assert.equal(
    loadText(gateway(server(HTTPS, undefined, '{}'))).gateways[0]?.spec.servers[0]?.tls?.mode,
    'PASSTHROUGH',
  );
  // Only httpsRedirect on a plain HTTP server.
  assert.equal(check(gateway(server(HTTP, undefined, '{httpsRedirect: true}'))).valid, true);
});

test('cipher suites: invalid and duplicate ones are warned about and left out', () => {
  const inputs = loadText(
    gateway(
      server(
        HTTPS,
        undefined,
        '{mode: SIMPLE, credentialName: c, cipherSuites: [ECDHE-ECDSA-AES128-SHA, bad-cipher, ECDHE-ECDSA-AES128-SHA, -ALL]}',
      ),
    ),
  );
  assert.deepEqual(errors(inputs), []);
  assert.deepEqual(inputs.gateways[0]?.spec.servers[0]?.tls?.cipherSuites, ['ECDHE-ECDSA-AES128-SHA', '-ALL']);
  const warnings = inputs.diagnostics.filter((d) => d.code === 'invalid-cipher-suite').map((d) => d.message);
  assert.deepEqual(warnings, [
    'ignoring duplicate cipher suites: ECDHE-ECDSA-AES128-SHA',
    'ignoring invalid cipher suites: bad-cipher',
  ]);
});

test('key material pasted into a file field is refused without being quoted', () => {
  const inputs = loadText(
    gateway(
      server(
        HTTPS,
        undefined,
        '{mode: SIMPLE, serverCertificate: "-----BEGIN CERTIFICATE-----\\nMIIB", privateKey: /k}',
      ),
    ),
  );
  assert.equal(inputs.gateways.length, 0);
  assert.ok(errors(inputs).every((d) => !d.message.includes('MIIB')));
});

test('VirtualService gateway references resolve as istiod resolves them', () => {
  assert.equal(resolveGatewayRef('mesh', 'default'), 'mesh');
  assert.equal(resolveGatewayRef('gw', 'default'), 'default/gw');
  assert.equal(resolveGatewayRef('./gw', 'default'), 'default/gw');
  assert.equal(resolveGatewayRef('istio-system/gw', 'default'), 'istio-system/gw');
  assert.equal(resolveGatewayRef('gw.istio-system', 'default'), 'istio-system/gw');
  assert.equal(resolveGatewayRef('gw.istio-system.svc.cluster.local', 'default'), 'istio-system/gw');
});

test('what is stored of a Gateway: the fields read, never inline key material', () => {
  const raw = {
    apiVersion: 'networking.istio.io/v1',
    kind: 'Gateway',
    metadata: { name: 'gw', namespace: 'istio-system', annotations: { note: 'x' }, uid: 'u-1' },
    spec: {
      selector: { istio: 'ingressgateway' },
      servers: [
        {
          port: { number: 443, name: 'https', protocol: 'HTTPS' },
          hosts: ['*'],
          tls: { mode: 'SIMPLE', credentialName: 'cert', unknownKnob: 1 },
        },
      ],
    },
  };
  const stored = retainedForStorage(raw);
  // The projection is built from null-prototype objects: compare as JSON.
  assert.deepEqual(JSON.parse(JSON.stringify(stored)), {
    apiVersion: 'networking.istio.io/v1',
    kind: 'Gateway',
    metadata: { name: 'gw', namespace: 'istio-system' },
    spec: {
      selector: { istio: 'ingressgateway' },
      servers: [
        {
          port: { number: 443, name: 'https', protocol: 'HTTPS' },
          hosts: ['*'],
          tls: { mode: 'SIMPLE', credentialName: 'cert' },
        },
      ],
    },
  });
  assert.equal(JSON.stringify(retainedForStorage(stored as Record<string, unknown>)), JSON.stringify(stored));
  const pem = structuredClone(raw);
  (pem.spec.servers[0]!.tls as Record<string, unknown>).serverCertificate = '-----BEGIN CERTIFICATE-----\nMIIB';
  assert.doesNotMatch(JSON.stringify(retainedForStorage(pem)), /MIIB|BEGIN/);
});

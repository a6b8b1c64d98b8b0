/**
 * `kubernetes-gateway://` SDS names as istiod serves them (pilot/pkg/xds/sds.go
 * filterAuthorizedResources: "For KubernetesGateway, we only allow VerifiedCertificateReferences";
 * pilot/pkg/model/gateway.go mergeGateways builds that set). The compile records, per router class,
 * the names its Gateways reference and it verified; the relay's SecretResolver serves exactly those.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Gateway } from '../../../src/model/gateway.js';
import { verifiedGatewaySecrets } from '../../../src/compile/gateway/verified-secrets.js';
import { SecretResolver } from '../../../src/relay/sds/secret-resolver.js';
import { parseGatewaySecretName } from '../../../src/relay/sds/secret-name.js';
import { MemorySecretSource } from '../../../src/relay/sds/secret-source.js';
import type { ProxyIdentity } from '../../../src/relay/security/identity.js';
import { served } from '../../helpers/mesh.js';
import {
  APP,
  compileConformance,
  gatewayNode,
  gatewayPod,
  INFRA,
  WEB,
} from '../../compile/gateway-api/conformance-harness.js';

const gatewayName = (ns: string, name: string): string => `kubernetes-gateway://${ns}/${name}`;

// One Gateway API Gateway with: a Secret of its own namespace, one of WEB under a ReferenceGrant,
// one of APP without a grant; and a hand-written Istio Gateway selecting the same pods, naming
// `kubernetes-gateway://` Secrets of its own namespace and of APP.
const MESH = `---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: secure, namespace: ${INFRA}}
spec:
  gatewayClassName: istio
  listeners:
  - name: https
    port: 443
    protocol: HTTPS
    hostname: secure.example.com
    tls: {certificateRefs: [{name: cert}, {name: certificate, namespace: ${WEB}}]}
  - name: vault
    port: 443
    protocol: HTTPS
    hostname: vault.example.com
    tls: {certificateRefs: [{name: vault, namespace: ${APP}}]}
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: secret, namespace: ${WEB}}
spec:
  from: [{group: gateway.networking.k8s.io, kind: Gateway, namespace: ${INFRA}}]
  to: [{group: "", kind: Secret, name: certificate}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: secure, namespace: ${INFRA}}
spec:
  parentRefs: [{name: secure}]
  rules: [{backendRefs: [{name: infra-backend-v1, port: 8080}]}]
---
apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: classic, namespace: ${INFRA}}
spec:
  selector: {gateway.networking.k8s.io/gateway-name: secure}
  servers:
  - port: {number: 8443, name: https, protocol: HTTPS}
    hosts: [classic.example.com]
    tls: {mode: MUTUAL, credentialName: "${gatewayName(INFRA, 'classic-cert')}"}
  - port: {number: 9443, name: https-other, protocol: HTTPS}
    hosts: [other.example.com]
    tls: {mode: SIMPLE, credentialName: "${gatewayName(APP, 'stolen')}"}
${gatewayPod('secure', INFRA, 12, [443, 8443, 9443])}`;

const VERIFIED = [
  gatewayName(INFRA, 'cert'),
  gatewayName(INFRA, 'classic-cert'),
  gatewayName(INFRA, 'classic-cert-cacert'),
  gatewayName(WEB, 'certificate'),
];

test('compile: a router class lists the kubernetes-gateway:// names its Gateways reference and the compile verified', () => {
  const result = compileConformance(MESH);
  const { classId } = served(result, gatewayNode('secure', INFRA, 12));
  const cls = result.snapshot.content.classes.find((c) => c.id === classId);
  assert.deepEqual(cls?.verifiedSecrets, VERIFIED);
  // The listeners name every one of them (the APP Secret without a grant is left out of the listener too).
  const listeners = JSON.stringify([...served(result, gatewayNode('secure', INFRA, 12)).resources.listeners.values()]);
  for (const name of VERIFIED) assert.ok(listeners.includes(`"${name}"`), name);
  assert.ok(!listeners.includes(gatewayName(APP, 'vault')));
  // Classes without such names carry no field at all (their documents stay as they were).
  for (const c of result.snapshot.content.classes)
    if (c.id !== classId) assert.equal('verifiedSecrets' in c, false, c.id);
});

test('compile: only Gateways of the proxy namespace verify, and another namespace only through a converted Gateway API Gateway', () => {
  const meta = (name: string, namespace: string) => ({ name, namespace, labels: {}, annotations: {} });
  const server = (credentialName: string, mode: 'SIMPLE' | 'OPTIONAL_MUTUAL' = 'SIMPLE') => ({
    port: { number: 443, protocol: 'HTTPS' as const, name: 'https' },
    hosts: ['*'],
    tls: { mode, credentialName },
  });
  const gw = (name: string, namespace: string, servers: ReturnType<typeof server>[]) =>
    ({ kind: 'Gateway', meta: meta(name, namespace), spec: { servers } }) as unknown as Gateway;
  assert.deepEqual(
    verifiedGatewaySecrets('ns', [
      gw('own', 'ns', [server(gatewayName('ns', 'a'), 'OPTIONAL_MUTUAL'), server('kubernetes://b')]),
      gw('foreign', 'other', [server(gatewayName('other', 'c'))]),
      gw('hand-written', 'ns', [server(gatewayName('other', 'd')), server('kubernetes-gateway://nons')]),
      gw('web~istio-autogenerated-k8s-gateway~https', 'ns', [server(gatewayName('other', 'e'))]),
    ]),
    [gatewayName('ns', 'a'), gatewayName('ns', 'a-cacert'), gatewayName('other', 'e')],
  );
});

test('SDS names: istiod ParseResourceName cases for kubernetes-gateway:// (namespace required)', () => {
  assert.deepEqual(parseGatewaySecretName('kubernetes-gateway://ns/cert'), {
    resourceName: 'kubernetes-gateway://ns/cert',
    namespace: 'ns',
    name: 'cert',
    caOnly: false,
  });
  assert.equal(parseGatewaySecretName('kubernetes-gateway://ns/cert-cacert')?.caOnly, true);
  for (const other of [
    'kubernetes-gateway://cert',
    'kubernetes-gateway:///cert',
    'kubernetes-gateway://ns/',
    'kubernetes://ns/c',
  ])
    assert.equal(parseGatewaySecretName(other), undefined, other);
});

test('SecretResolver: a kubernetes-gateway:// name is served only when the proxy class verified it', () => {
  const result = compileConformance(MESH);
  const { classId } = served(result, gatewayNode('secure', INFRA, 12));
  const verified = new Set(result.snapshot.content.classes.find((c) => c.id === classId)?.verifiedSecrets);
  const data = { 'tls.crt': Buffer.from('CERT'), 'tls.key': Buffer.from('KEY'), 'ca.crt': Buffer.from('CA') };
  const source = new MemorySecretSource();
  for (const [ns, name] of [
    [INFRA, 'cert'],
    [INFRA, 'classic-cert'],
    [INFRA, 'unlisted'],
    [WEB, 'certificate'],
    [APP, 'vault'],
    [APP, 'stolen'],
  ] as const)
    source.set(ns, name, { data, revision: `${ns}/${name}/1` });
  const resolver = new SecretResolver(source);
  const gateway: ProxyIdentity = {
    principal: `spiffe://cluster.local/ns/${INFRA}/sa/secure-istio`,
    namespace: INFRA,
    serviceAccount: 'secure-istio',
    method: 'token-review',
  };
  const names = [
    gatewayName(INFRA, 'cert'),
    gatewayName(INFRA, 'classic-cert-cacert'),
    gatewayName(WEB, 'certificate'),
    gatewayName(INFRA, 'unlisted'),
    gatewayName(APP, 'vault'),
    gatewayName(APP, 'stolen'),
  ];
  // No SubjectAccessReview is needed for verified names (mayReadKeys false), across namespaces too.
  const got = resolver.resolve({ identity: gateway, mayReadKeys: false, verifiedSecrets: verified }, names);
  assert.deepEqual(
    [...got.resources.keys()],
    [gatewayName(INFRA, 'cert'), gatewayName(INFRA, 'classic-cert-cacert'), gatewayName(WEB, 'certificate')],
  );
  assert.deepEqual(
    got.denied.map((d) => d.name),
    [gatewayName(INFRA, 'unlisted'), gatewayName(APP, 'vault'), gatewayName(APP, 'stolen')],
  );
  for (const d of got.denied) assert.match(d.reason, /not a certificate reference verified for this proxy's Gateway/);
  assert.deepEqual([...source.watched].sort(), [INFRA, WEB]);

  // Unlisted for another class (or no class): the same name is refused, keys or not.
  const other = resolver.resolve({ identity: gateway, mayReadKeys: true, verifiedSecrets: new Set() }, names);
  assert.equal(other.resources.size, 0);
  assert.equal(other.denied.length, names.length);
  // kubernetes:// names keep their rules: never another namespace, even when listed as verified.
  const classicForm = resolver.resolve(
    { identity: gateway, mayReadKeys: true, verifiedSecrets: new Set([`kubernetes://${WEB}/certificate`]) },
    [`kubernetes://${WEB}/certificate`],
  );
  assert.match(classicForm.denied[0]?.reason ?? '', /secret of namespace/);
  // An anonymous proxy gets none.
  const anonymous = resolver.resolve({ identity: undefined, mayReadKeys: true, verifiedSecrets: verified }, names);
  assert.equal(anonymous.resources.size, 0);
  assert.deepEqual(
    anonymous.denied.map((d) => d.reason),
    names.map(() => 'the proxy is not authenticated'),
  );
});

/**
 * Istio's security tasks on the bookinfo state compile without a diagnostic of their own: the
 * bookinfo authorization policies (istio.io "Authorization on HTTP traffic"), mesh-wide STRICT
 * mTLS, an external authorizer from Istio's samples/extauthz behind a CUSTOM policy, and JWTs
 * from samples/jwt-server required by a RequestAuthentication and an ALLOW on requestPrincipals.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { compileTexts } from '../../../src/pipeline.js';
import { nodeSha256Hex } from '../../../src/snapshot/store/local.js';
import { BOOKINFO_NODES, served } from '../../helpers/mesh.js';
import { FIXTURES, REPO } from '../../helpers/paths.js';

const STATE = join(FIXTURES, 'derived', 'bookinfo-cluster-state.yaml');
const SAMPLES = join(FIXTURES, 'istio', 'samples');
const file = (path: string) => ({ file: path, text: readFileSync(path, 'utf8') });
const text = (name: string, body: string) => ({ file: name, text: body });

const TASKS = `apiVersion: v1
kind: ConfigMap
metadata: { name: istio, namespace: istio-system }
data:
  mesh: |-
    extensionProviders:
    - name: sample-ext-authz-grpc
      envoyExtAuthzGrpc:
        service: ext-authz.default.svc.cluster.local
        port: 9000
    - name: sample-ext-authz-http
      envoyExtAuthzHttp:
        service: ext-authz.default.svc.cluster.local
        port: 8000
        includeRequestHeadersInCheck: [x-ext-authz]
---
apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: { name: default, namespace: istio-system }
spec: { mtls: { mode: STRICT } }
---
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: { name: ext-authz, namespace: default }
spec:
  selector: { matchLabels: { app: details } }
  action: CUSTOM
  provider: { name: sample-ext-authz-grpc }
  rules: [{ to: [{ operation: { paths: ["/headers"] } }] }]
---
apiVersion: security.istio.io/v1
kind: RequestAuthentication
metadata: { name: jwt-example, namespace: default }
spec:
  selector: { matchLabels: { app: ratings } }
  jwtRules:
  - issuer: testing@secure.istio.io
    jwksUri: http://jwt-server.default.svc.cluster.local:8000/jwks
---
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: { name: require-jwt, namespace: default }
spec:
  selector: { matchLabels: { app: ratings } }
  rules: [{ from: [{ source: { requestPrincipals: ["testing@secure.istio.io/testing@secure.istio.io"] } }] }]`;

const compileOf = (files: { file: string; text: string }[]) => compileTexts(files, { hasher: nodeSha256Hex });
const own = (codes: readonly { code: string }[]) => codes.map((d) => d.code).filter((c) => c !== 'ignored-kind');

test('bookinfo + the security tasks: no diagnostic beyond those of the state and samples themselves', () => {
  const mesh = [
    file(STATE),
    file(join(SAMPLES, 'extauthz', 'ext-authz.yaml')),
    file(join(SAMPLES, 'jwt-server', 'jwt-server.yaml')),
  ];
  const baseline = compileOf(mesh).diagnostics;
  const result = compileOf([
    ...mesh,
    file(join(REPO, 'test', 'golden', 'security-bookinfo-authz', 'policies.yaml')),
    text('tasks.yaml', TASKS),
  ]);
  assert.deepEqual(own(result.diagnostics), own(baseline));
  // And they took effect: productpage is a class of its own (its viewer policy), with RBAC under STRICT mTLS.
  const productpage = served(result, BOOKINFO_NODES.productpage);
  assert.equal(productpage.classId, 'sidecar/default/productpage/authz:default/productpage-viewer');
  const inbound = productpage.resources.listeners.get('virtualInbound') as Record<string, unknown>;
  const chains = inbound.filter_chains as { filter_chain_match?: { transport_protocol?: string } }[];
  assert.ok(chains.slice(1).every((c) => c.filter_chain_match?.transport_protocol === 'tls'));
  assert.match(JSON.stringify(inbound), /envoy\.filters\.http\.rbac/);
});

/**
 * CRD field sweep over the Kubernetes Gateway API kinds meshsnap reads (GatewayClass, Gateway,
 * HTTPRoute, GRPCRoute, TCPRoute, TLSRoute, ReferenceGrant): the CRDs the repo holds, two releases
 * (test/fixtures/gateway-api/crds-v1.2.1-no-cel.yaml, and crds-v1.6.0-standard.yaml: the standard
 * channel of the release istiod HEAD builds against; in each the served version meshsnap reads: v1,
 * else the only one served) go field by field and object by object through meshsnap's validators: each
 * field is known or explicitly reported as not applied, each object is read with a known-field
 * list (the walker and both checks: test/helpers/crd-sweep.ts, shared with the Istio sweep).
 */
import { crdSweepTests, type SweepKind } from '../helpers/crd-sweep.js';
import { GATEWAY_API_CRDS } from '../helpers/gateway-api-crds.js';
import { REPO } from '../helpers/paths.js';
import { join } from 'node:path';

const GROUP = 'gateway.networking.k8s.io';
const parentRefs = [{ name: 'gw' }];
const backendRefs = [{ name: 'a', port: 80 }];

/** A skeleton per kind: what its validator needs to get past the required parts. */
const KINDS: Readonly<Record<string, SweepKind>> = {
  GatewayClass: { group: GROUP, skeleton: { controllerName: 'istio.io/gateway-controller' } },
  Gateway: {
    group: GROUP,
    skeleton: { gatewayClassName: 'istio', listeners: [{ name: 'l', port: 80, protocol: 'HTTP' }] },
  },
  HTTPRoute: { group: GROUP, skeleton: { parentRefs, rules: [{ backendRefs }] } },
  GRPCRoute: { group: GROUP, skeleton: { parentRefs, rules: [{ backendRefs }] } },
  TCPRoute: { group: GROUP, skeleton: { parentRefs, rules: [{ backendRefs }] } },
  TLSRoute: { group: GROUP, skeleton: { parentRefs, hostnames: ['a.example.com'], rules: [{ backendRefs }] } },
  ReferenceGrant: {
    group: GROUP,
    skeleton: { from: [{ group: GROUP, kind: 'HTTPRoute', namespace: 'ns2' }], to: [{ group: '', kind: 'Service' }] },
  },
};

crdSweepTests(GATEWAY_API_CRDS, KINDS, 'v1.2.1');
crdSweepTests(join(REPO, 'test', 'fixtures', 'gateway-api', 'crds-v1.6.0-standard.yaml'), KINDS, 'v1.6.0 standard');

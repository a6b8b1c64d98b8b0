/**
 * CRD field sweep over Istio's kinds: for every Istio kind meshsnap reads, the CRD schema of the
 * version it reads (v1 where the CRD serves it) is taken from the shared fixture (Istio's
 * manifests/charts/base/files/crd-all.gen.yaml) and every field and object of it goes through
 * meshsnap's validator: each field is known or explicitly reported as not applied, each object is
 * read with a known-field list (the walker and both checks: test/helpers/crd-sweep.ts).
 *
 * A new CRD (a fixture bump) whose fields the validators do not know makes this test fail.
 */
import { join } from 'node:path';
import { crdSweepTests, type SweepKind } from '../helpers/crd-sweep.js';
import { FIXTURES } from '../helpers/paths.js';

const CRDS = join(FIXTURES, 'istio', 'manifests', 'charts', 'base', 'files', 'crd-all.gen.yaml');

/** A skeleton per kind: what its validator needs to get past the required parts. */
const KINDS: Readonly<Record<string, SweepKind>> = {
  VirtualService: {
    group: 'networking.istio.io',
    skeleton: {
      hosts: ['a.ns1.svc.cluster.local'],
      http: [{ route: [{ destination: { host: 'a' } }] }],
      tcp: [{ route: [{ destination: { host: 'a' } }] }],
      tls: [{ match: [{ sniHosts: ['a'] }], route: [{ destination: { host: 'a' } }] }],
    },
  },
  DestinationRule: { group: 'networking.istio.io', skeleton: { host: 'a' } },
  Gateway: {
    group: 'networking.istio.io',
    skeleton: { servers: [{ port: { number: 80, name: 'http', protocol: 'HTTP' }, hosts: ['*/a.example.com'] }] },
  },
  ServiceEntry: {
    group: 'networking.istio.io',
    skeleton: { hosts: ['a.example.com'], ports: [{ number: 80, name: 'http', protocol: 'HTTP' }], resolution: 'DNS' },
  },
  WorkloadEntry: { group: 'networking.istio.io', skeleton: { address: '10.0.0.1' } },
  WorkloadGroup: { group: 'networking.istio.io', skeleton: { template: {} } },
  // ALLOW_ANY: an egressProxy is read only with it.
  Sidecar: {
    group: 'networking.istio.io',
    skeleton: { egress: [{ hosts: ['./*'] }], outboundTrafficPolicy: { mode: 'ALLOW_ANY' } },
  },
  PeerAuthentication: { group: 'security.istio.io', skeleton: {} },
  AuthorizationPolicy: { group: 'security.istio.io', skeleton: {} },
  RequestAuthentication: { group: 'security.istio.io', skeleton: { jwtRules: [{ issuer: 'https://issuer.example' }] } },
  Telemetry: { group: 'telemetry.istio.io', skeleton: {} },
  EnvoyFilter: { group: 'networking.istio.io', skeleton: {} },
};

crdSweepTests(CRDS, KINDS);

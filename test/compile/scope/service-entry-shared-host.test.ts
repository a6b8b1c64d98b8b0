/**
 * One host, ServiceEntries in several namespaces: istiod keeps a service per (namespace, host) and
 * each sidecar sees the one its scope adds first — those exported to its namespace (its own with
 * `.`, or naming it) before the public ones, each list oldest first (push_context.go
 * servicesExportedToNamespace, sidecar.go appendSidecarServices; never merged across namespaces:
 * canMergeServices). Each entry points the host at its own backend, so the served cluster says
 * whose entry a sidecar got.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileMesh, pod, proxy, sidecar, view } from './scope-mesh.js';

const HOST = 'api.example.com';
const CLUSTER = `outbound|443||${HOST}`;

const entry = (ns: string, exportTo: string, created?: string): string => `apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: api, namespace: ${ns}${created ? `, creationTimestamp: "${created}"` : ''}}
spec:
  hosts: ["${HOST}"]
  location: MESH_EXTERNAL
  resolution: DNS
  exportTo: ${exportTo}
  ports: [{number: 443, name: tls, protocol: TLS}]
  endpoints: [{address: ${ns}.backend.internal}]`;

/** A running pod in each namespace, so each has sidecars. */
const PODS = ['team-a', 'team-b', 'team-c', 'other'].map((ns, i) => pod(ns, 'app-1', `10.9.0.${i + 1}`, '{app: app}'));

/** The backend a sidecar of `ns` reaches the host by (whose entry it got), undefined without the cluster. */
function backendSeen(result: ReturnType<typeof compileMesh>, ns: string): string | undefined {
  const cluster = view(result, proxy(ns, { app: 'app' })).resources.clusters.get(CLUSTER) as
    | {
        load_assignment?: {
          endpoints?: { lb_endpoints?: { endpoint?: { address?: { socket_address?: { address?: string } } } }[] }[];
        };
      }
    | undefined;
  if (!cluster) return undefined;
  const addresses = (cluster.load_assignment?.endpoints ?? []).flatMap((l) =>
    (l.lb_endpoints ?? []).map((e) => e.endpoint?.address?.socket_address?.address),
  );
  assert.equal(addresses.length, 1, `${ns}: ${JSON.stringify(addresses)}`);
  return addresses[0];
}

const seen = (result: ReturnType<typeof compileMesh>): Record<string, string | undefined> =>
  Object.fromEntries(['team-a', 'team-b', 'team-c', 'other'].map((ns) => [ns, backendSeen(result, ns)]));

test('each namespace sees its own private entry; the others the public one; no entry is dropped', () => {
  const result = compileMesh(
    ...PODS,
    entry('team-a', '["."]', '2024-01-01T00:00:00Z'),
    entry('team-b', '["."]', '2024-02-01T00:00:00Z'),
    entry('team-c', '["*"]', '2024-03-01T00:00:00Z'),
  );
  assert.deepEqual(seen(result), {
    'team-a': 'team-a.backend.internal',
    'team-b': 'team-b.backend.internal',
    'team-c': 'team-c.backend.internal',
    other: 'team-c.backend.internal',
  });
  assert.deepEqual(
    result.diagnostics.filter((d) => d.code === 'duplicate-host'),
    [],
    'every namespace keeps its entry',
  );
});

test('without a public entry, a namespace no entry is exported to does not see the host', () => {
  const result = compileMesh(
    ...PODS,
    entry('team-a', '["."]', '2024-01-01T00:00:00Z'),
    entry('team-b', '["."]', '2024-02-01T00:00:00Z'),
  );
  assert.deepEqual(seen(result), {
    'team-a': 'team-a.backend.internal',
    'team-b': 'team-b.backend.internal',
    'team-c': undefined,
    other: undefined,
  });
});

test("an entry exported to a namespace by name competes by age with that namespace's own", () => {
  const older = compileMesh(
    ...PODS,
    entry('team-a', '[".", "team-b"]', '2024-01-01T00:00:00Z'),
    entry('team-b', '["."]', '2024-02-01T00:00:00Z'),
  );
  assert.equal(backendSeen(older, 'team-b'), 'team-a.backend.internal');
  assert.equal(backendSeen(older, 'team-a'), 'team-a.backend.internal');
  const younger = compileMesh(
    ...PODS,
    entry('team-a', '[".", "team-b"]', '2024-03-01T00:00:00Z'),
    entry('team-b', '["."]', '2024-02-01T00:00:00Z'),
  );
  assert.equal(backendSeen(younger, 'team-b'), 'team-b.backend.internal');
});

test('a private entry wins over an older public one in its namespace; among public ones the oldest wins', () => {
  const result = compileMesh(
    ...PODS,
    entry('team-a', '["*"]', '2024-01-01T00:00:00Z'),
    entry('team-b', '["."]', '2024-02-01T00:00:00Z'),
    entry('team-c', '["*"]', '2023-12-01T00:00:00Z'),
  );
  assert.deepEqual(seen(result), {
    'team-a': 'team-c.backend.internal',
    'team-b': 'team-b.backend.internal',
    'team-c': 'team-c.backend.internal',
    other: 'team-c.backend.internal',
  });
  // Without ages (istiod's zero time for all), the namespace order decides.
  const unaged = compileMesh(...PODS, entry('team-c', '["*"]'), entry('team-a', '["*"]'));
  assert.equal(backendSeen(unaged, 'other'), 'team-a.backend.internal');
});

test("a Sidecar importing only another namespace's hosts sees that namespace's entry, not its own", () => {
  const result = compileMesh(
    ...PODS,
    entry('team-b', '["."]', '2024-01-01T00:00:00Z'),
    entry('team-c', '["*"]', '2024-02-01T00:00:00Z'),
    sidecar('team-b', '{egress: [{hosts: ["team-c/*"]}]}'),
  );
  assert.equal(backendSeen(result, 'team-b'), 'team-c.backend.internal');
  const own = compileMesh(
    ...PODS,
    entry('team-b', '["."]', '2024-01-01T00:00:00Z'),
    entry('team-c', '["*"]', '2024-02-01T00:00:00Z'),
    sidecar('team-b', '{egress: [{hosts: ["./*", "team-c/*"]}]}'),
  );
  assert.equal(backendSeen(own, 'team-b'), 'team-b.backend.internal');
});

test('a host a Kubernetes Service owns stays the Service’s: the entry is skipped with duplicate-host', () => {
  const result = compileMesh(
    ...PODS,
    `apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: squat, namespace: team-a}
spec:
  hosts: ["known.default.svc.cluster.local"]
  resolution: DNS
  ports: [{number: 80, name: http, protocol: HTTP}]`,
  );
  const warned = result.diagnostics.filter((d) => d.code === 'duplicate-host');
  assert.equal(warned.length, 1);
  assert.equal(warned[0]?.namespace, 'team-a');
  assert.equal(warned[0]?.field, 'spec.hosts[0]');
});

test("a STATIC entry's assignment is the chosen namespace's endpoints", () => {
  const staticEntry = (ns: string, exportTo: string, ip: string, created: string): string =>
    `apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: db, namespace: ${ns}, creationTimestamp: "${created}"}
spec:
  hosts: ["db.example.com"]
  addresses: ["240.0.0.9"]
  location: MESH_EXTERNAL
  resolution: STATIC
  exportTo: ${exportTo}
  ports: [{number: 5432, name: tcp, protocol: TCP}]
  endpoints: [{address: ${ip}}]`;
  const result = compileMesh(
    ...PODS,
    staticEntry('team-a', '["*"]', '192.0.2.1', '2024-01-01T00:00:00Z'),
    staticEntry('team-b', '["."]', '192.0.2.2', '2024-02-01T00:00:00Z'),
  );
  const assigned = (ns: string): string[] => {
    const cla = view(result, proxy(ns, { app: 'app' })).resources.endpoints.get('outbound|5432||db.example.com') as {
      endpoints?: { lb_endpoints?: { endpoint?: { address?: { socket_address?: { address?: string } } } }[] }[];
    };
    return (cla?.endpoints ?? []).flatMap((l) =>
      (l.lb_endpoints ?? []).map((e) => e.endpoint?.address?.socket_address?.address ?? ''),
    );
  };
  assert.deepEqual(assigned('team-b'), ['192.0.2.2']);
  assert.deepEqual(assigned('team-a'), ['192.0.2.1']);
  assert.deepEqual(assigned('other'), ['192.0.2.1']);
});

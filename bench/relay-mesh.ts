/**
 * The mesh the relay benchmark serves: `services` gRPC services in namespace `bench`, each with
 * one pod and one EndpointSlice. `generation` moves the endpoint of svc-0 (an endpoint change,
 * the most common snapshot switch), so every stream subscribed to svc-0 gets exactly one new
 * ClusterLoadAssignment.
 */
export const BENCH_NAMESPACE = 'bench';
export const BENCH_PORT = 8080;

export const benchHost = (i: number): string => `svc-${i}.${BENCH_NAMESPACE}.svc.cluster.local`;

/** The names a proxyless client of service i asks for, per type (as grpc-js-xds does, by name). */
export function benchNames(i: number): {
  listeners: string[];
  routes: string[];
  clusters: string[];
  endpoints: string[];
} {
  const host = benchHost(i);
  const listener = `${host}:${BENCH_PORT}`;
  const cluster = `outbound|${BENCH_PORT}||${host}`;
  return { listeners: [listener], routes: [listener], clusters: [cluster], endpoints: [cluster] };
}

export function benchMeshYaml(services: number, generation: number): string {
  const docs = [`apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${BENCH_NAMESPACE}\n`];
  for (let i = 0; i < services; i++) {
    // svc-0's pod IP changes with each generation; the others stay put.
    const ip =
      i === 0
        ? `10.1.${Math.floor(generation / 250) % 250}.${(generation % 250) + 1}`
        : `10.2.${Math.floor(i / 250)}.${(i % 250) + 1}`;
    docs.push(`apiVersion: v1
kind: Service
metadata:
  name: svc-${i}
  namespace: ${BENCH_NAMESPACE}
spec:
  clusterIP: 10.96.${Math.floor(i / 250)}.${(i % 250) + 1}
  selector:
    app: svc-${i}
  ports:
  - name: grpc
    port: ${BENCH_PORT}
    protocol: TCP
`);
    docs.push(`apiVersion: v1
kind: Pod
metadata:
  name: svc-${i}-pod
  namespace: ${BENCH_NAMESPACE}
  labels:
    app: svc-${i}
spec:
  containers:
  - name: app
    image: app:1
status:
  phase: Running
  podIP: ${ip}
  podIPs:
  - ip: ${ip}
  conditions:
  - type: Ready
    status: "True"
`);
    docs.push(`apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: svc-${i}-a
  namespace: ${BENCH_NAMESPACE}
  labels:
    kubernetes.io/service-name: svc-${i}
addressType: IPv4
ports:
- name: grpc
  port: ${BENCH_PORT}
  protocol: TCP
endpoints:
- addresses:
  - ${ip}
  conditions:
    ready: true
  targetRef:
    kind: Pod
    name: svc-${i}-pod
    namespace: ${BENCH_NAMESPACE}
`);
  }
  return docs.join('---\n');
}

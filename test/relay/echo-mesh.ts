/**
 * The mesh the end-to-end tests compile: Service `echo` (ns default, port grpc-echo 7070) backed by
 * two pods v1/v2 that both run on 127.0.0.1 with different ports. An EndpointSlice has one port
 * list for all its endpoints, so each backend gets its own slice (same service-name label).
 */
export interface EchoMeshOptions {
  readonly ports: { readonly v1: number; readonly v2: number };
  /** Route weights to subsets v1 / v2 (sum 100). */
  readonly weights: { readonly v1: number; readonly v2: number };
  /** Abort every call with UNAVAILABLE (httpStatus 503 + grpcStatus UNAVAILABLE, 100 %). */
  readonly abort?: boolean;
  /** Retry up to 3 times on `unavailable`. */
  readonly retries?: boolean;
}

export const ECHO_HOST = 'echo.default.svc.cluster.local';
export const ECHO_PORT = 7070;
export const ECHO_TARGET = `xds:///${ECHO_HOST}:${ECHO_PORT}`;

const pod = (version: string): string => `apiVersion: v1
kind: Pod
metadata:
  name: echo-${version}
  namespace: default
  labels:
    app: echo
    version: ${version}
spec:
  serviceAccountName: echo
  containers:
  - name: echo
    ports:
    - name: grpc-echo
      containerPort: 7070
      protocol: TCP
status:
  phase: Running
  podIP: 127.0.0.1
  podIPs:
  - ip: 127.0.0.1
  conditions:
  - type: Ready
    status: "True"
`;

const slice = (version: string, port: number): string => `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: echo-${version}
  namespace: default
  labels:
    kubernetes.io/service-name: echo
addressType: IPv4
ports:
- name: grpc-echo
  port: ${port}
  protocol: TCP
endpoints:
- addresses:
  - 127.0.0.1
  conditions:
    ready: true
    serving: true
    terminating: false
  targetRef:
    kind: Pod
    name: echo-${version}
    namespace: default
`;

export function echoMeshYaml(o: EchoMeshOptions): string {
  const fault = o.abort
    ? `
    fault:
      abort:
        httpStatus: 503
        percentage:
          value: 100`
    : '';
  const retries = o.retries
    ? `
    retries:
      attempts: 3
      perTryTimeout: 2s
      retryOn: unavailable`
    : '';
  const route = (subset: 'v1' | 'v2', weight: number): string => `
    - destination:
        host: ${ECHO_HOST}
        subset: ${subset}
        port:
          number: ${ECHO_PORT}
      weight: ${weight}`;
  // The route's name changes with the scenario on purpose: grpc-js-xds 1.14 compares a new resource
  // with its cached one by walking only the OLD object's keys (xds-resource-type.js deepEqual), so
  // an update that only ADDS something (a typed_per_filter_config fault entry to a route that had
  // none) is taken as "unchanged" and silently not applied. A changed scalar makes it apply.
  const routeName = ['split', ...(o.abort ? ['abort'] : []), ...(o.retries ? ['retry'] : [])].join('-');
  const docs = [
    `apiVersion: v1
kind: Namespace
metadata:
  name: default
`,
    `apiVersion: v1
kind: Service
metadata:
  name: echo
  namespace: default
spec:
  type: ClusterIP
  clusterIP: 10.96.0.70
  clusterIPs: [10.96.0.70]
  selector:
    app: echo
  ports:
  - name: grpc-echo
    port: ${ECHO_PORT}
    targetPort: 7070
    protocol: TCP
`,
    pod('v1'),
    pod('v2'),
    slice('v1', o.ports.v1),
    slice('v2', o.ports.v2),
    `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata:
  name: echo
  namespace: default
spec:
  host: ${ECHO_HOST}
  subsets:
  - name: v1
    labels:
      version: v1
  - name: v2
    labels:
      version: v2
`,
    `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata:
  name: echo
  namespace: default
spec:
  hosts:
  - ${ECHO_HOST}
  http:
  - name: ${routeName}${fault}${retries}
    route:${route('v1', o.weights.v1)}${route('v2', o.weights.v2)}
`,
  ];
  return docs.join('---\n');
}

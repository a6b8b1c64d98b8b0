/** `meshsnap watch`: its option table (used by --help and the README test), without the command's implementation. */
import { command, logLevelOption, storeOptions } from '../args.js';

export const watchSpec = command({
  name: 'watch',
  summary: 'watch a cluster and publish a snapshot after every debounced change',
  options: {
    kubeconfig: {
      type: 'string',
      value: 'FILE',
      help: 'the cluster (default: $KUBECONFIG, ~/.kube/config, in-cluster)',
    },
    context: { type: 'string', value: 'NAME', help: 'the kubeconfig context (default: its current context)' },
    ...storeOptions,
    namespace: {
      type: 'string',
      multiple: true,
      value: 'NS',
      help: 'watch only this namespace (repeatable; default: all)',
    },
    'compile-url': {
      type: 'string',
      value: 'URL',
      help: 'compile remotely with POST URL (token from $MESHSNAP_COMPILE_TOKEN)',
    },
    'debounce-ms': { type: 'string', value: 'MS', default: '100', help: 'publish once changes are quiet this long' },
    'debounce-max-ms': {
      type: 'string',
      value: 'MS',
      default: '10000',
      help: 'publish at the latest this long after the first change',
    },
    notify: {
      type: 'string',
      multiple: true,
      value: 'URL',
      help: 'after each publish, tell the relay at URL (http://host:port) or every relay a name resolves to (dns+http://name:port) to read the head now (repeatable)',
    },
    'write-status': {
      type: 'boolean',
      default: false,
      help: 'write the computed Gateway API statuses (GatewayClass, Gateway, routes) to their status subresources, only when they change (needs update on */status: infra/k8s/write-status)',
    },
    'status-qps': {
      type: 'string',
      value: 'QPS',
      default: '20',
      help: 'with --write-status: at most this many status requests per second (burst: twice as many)',
    },
    'http-port': {
      type: 'string',
      value: 'PORT',
      default: '15015',
      help: '/healthz, /readyz, /metrics; 0 picks a free port (see the watch.http_listening log line)',
    },
    ...logLevelOption,
  },
  examples: [
    'meshsnap watch --store s3://bucket/meshsnap',
    'meshsnap watch --kubeconfig ~/.kube/kind --namespace shop --namespace istio-system',
    'meshsnap watch --store s3://bucket/meshsnap --write-status',
  ],
});

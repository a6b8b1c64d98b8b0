/** `meshsnap serve`: its option table (used by --help and the README test), without the command's implementation. */
import { command, logLevelOption, storeOptions } from '../args.js';

export const serveSpec = command({
  name: 'serve',
  summary: 'run watch + relay + HTTP API (and its page at /) in one process',
  options: {
    ...storeOptions,
    host: { type: 'string', value: 'ADDR', default: '0.0.0.0', help: 'address every port listens on' },
    'http-port': {
      type: 'string',
      value: 'PORT',
      default: '8080',
      help: 'the HTTP API, with the page at /; 0 picks a free port (see the serve.listening log line)',
    },
    'relay-port': { type: 'string', value: 'PORT', default: '15010', help: 'the relay’s xDS (gRPC) port' },
    'relay-http-port': {
      type: 'string',
      value: 'PORT',
      default: '15014',
      help: 'the relay’s /healthz, /readyz, /metrics, /debug/proxies',
    },
    kubeconfig: {
      type: 'string',
      value: 'FILE',
      help: 'the cluster to watch (default: $KUBECONFIG, ~/.kube/config, in-cluster)',
    },
    context: { type: 'string', value: 'NAME', help: 'the kubeconfig context (default: its current context)' },
    'no-watch': {
      type: 'boolean',
      default: false,
      help: 'do not watch a cluster (publish through the API or meshsnap compile)',
    },
    'no-relay': { type: 'boolean', default: false, help: 'do not run the relay' },
    'trust-actor-header': {
      type: 'boolean',
      default: false,
      help: 'take the actor from the X-Meshsnap-Actor header (behind a proxy that sets it)',
    },
    ...logLevelOption,
  },
  examples: [
    'MESHSNAP_WRITE_TOKEN=… meshsnap serve --store /var/lib/meshsnap',
    'meshsnap serve --no-watch --http-port 0 --relay-port 0 --relay-http-port 0',
  ],
});

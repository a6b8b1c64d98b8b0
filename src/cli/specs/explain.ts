/** `meshsnap explain`: its option table (used by --help and the README test), without the command's implementation. */
import { command, storeOptions } from '../args.js';
import { nodeOptions } from './options.js';

export const explainSpec = command({
  name: 'explain',
  summary: 'where a request from a proxy goes (listener, filter chain, route, clusters, endpoints) and why',
  args: '[VERSION|latest|tag:NAME|rev:PREFIX|candidate:N]',
  positionals: { max: 1 },
  options: {
    ...nodeOptions,
    pod: {
      type: 'string',
      value: 'NS/NAME',
      help: 'the proxy of a pod of the version’s stored inputs (instead of --node)',
    },
    to: {
      type: 'string',
      value: 'HOST:PORT',
      required: true,
      help: 'where the request goes (a service name, FQDN or IP)',
    },
    path: { type: 'string', value: 'PATH', default: '/', help: 'request path, with a query string if any' },
    method: { type: 'string', value: 'METHOD', default: 'GET', help: 'request method' },
    header: { type: 'string', value: 'NAME=VALUE', multiple: true, help: 'a request header (repeatable)' },
    tls: { type: 'boolean', default: false, help: 'the client speaks TLS (inbound: Istio mTLS)' },
    sni: { type: 'string', value: 'NAME', help: 'TLS server name (implies --tls; default: the host)' },
    protocol: {
      type: 'string',
      value: 'http|h2c|h2|tcp',
      help: 'what the client speaks: http (http/1.1, the default), h2c, h2 (default with outbound --tls) or tcp',
    },
    inbound: { type: 'boolean', default: false, help: 'a call into the proxy’s workload (port of the workload)' },
    version: {
      type: 'string',
      value: 'VERSION',
      help: 'the version to ask (the same as the VERSION argument: a number, latest, tag:NAME, rev:PREFIX, candidate:N)',
    },
    across: {
      type: 'string',
      value: 'A..B',
      help: 'ask every version from A to B (selectors) and report where the answer changed',
    },
    text: { type: 'boolean', default: false, help: 'a readable form instead of JSON' },
    ...storeOptions,
  },
  examples: [
    `meshsnap explain --pod default/productpage-v1-5f6d7c8b9-abcde --to reviews:9080 --path /reviews/0 --header end-user=jason --text`,
    `meshsnap explain 12 --node 'sidecar~10.244.0.16~productpage-v1-5f6d7c8b9-abcde.default~default.svc.cluster.local' --metadata '{"NAMESPACE":"default","LABELS":{"app":"productpage"}}' --to reviews.default.svc.cluster.local:9080`,
    `meshsnap explain --pod default/productpage-v1-5f6d7c8b9-abcde --to reviews:9080 --path /api/v2 --across 10..15 --text`,
    `meshsnap explain --pod default/reviews-v2-5f6d7c8b9-abcde --inbound --tls --to reviews:9080`,
  ],
});

/** `meshsnap bootstrap`: its option table (used by --help and the README test), without the command's implementation. */
import { command } from '../args.js';

export const bootstrapSpec = command({
  name: 'bootstrap',
  summary: 'print an Envoy and a proxyless gRPC bootstrap pointing at the relay',
  options: {
    node: {
      type: 'string',
      value: 'NODE_ID',
      required: true,
      help: 'the node id, as istiod names it: <type>~<ip>~<pod>.<namespace>~<namespace>.svc.<domain>',
    },
    relay: {
      type: 'string',
      value: 'HOST:PORT',
      default: 'meshsnap-relay.meshsnap-system.svc:15012',
      help: 'the relay’s xDS address',
    },
    type: {
      type: 'string',
      value: 'sidecar|router',
      help: 'the proxy type (default: the type in the node id); router prints the gateway’s Envoy bootstrap only',
    },
    namespace: { type: 'string', value: 'NS', help: 'node metadata NAMESPACE (default: the namespace in the node id)' },
    labels: {
      type: 'string',
      value: 'k=v,...',
      help: 'node metadata LABELS, which place a sidecar or gateway in its proxy class',
    },
    locality: {
      type: 'string',
      value: 'REGION/ZONE/SUBZONE',
      help: 'the node’s locality, which picks its EDS variant (its own zone first where locality failover applies)',
    },
    ca: {
      type: 'string',
      value: 'FILE',
      default: '/var/run/secrets/meshsnap/relay-ca.crt',
      help: 'CA bundle that signed the relay’s TLS certificate',
    },
    cert: { type: 'string', value: 'FILE', help: 'the proxy’s certificate (mTLS; SPIFFE URI SAN of its namespace)' },
    key: { type: 'string', value: 'FILE', help: 'the private key of --cert' },
    'token-file': {
      type: 'string',
      value: 'FILE',
      help: 'service-account token for the gRPC bootstrap’s call_creds (jwt_token_file)',
    },
    sni: { type: 'string', value: 'NAME', help: 'server name checked in the relay’s certificate (default: its host)' },
    insecure: { type: 'boolean', help: 'plaintext xDS (a relay run with --insecure)' },
  },
  examples: [
    "meshsnap bootstrap --node 'sidecar~10.244.1.10~web-v1-6c9f7d8b5-k2x7p.shop~shop.svc.cluster.local' --labels app=web,version=v1 --relay 127.0.0.1:15010",
    "meshsnap bootstrap --type router --node 'router~10.244.0.20~istio-ingressgateway-7d4f9c-x2k8q.istio-system~istio-system.svc.cluster.local' --labels app=istio-ingressgateway,istio=ingressgateway",
  ],
});

/** `meshsnap relay`: its option table (used by --help and the README test), without the command's implementation. */
import { command, type FlagSpec, logLevelOption, storeOptions } from '../args.js';

const limitFlag = (help: string): FlagSpec => ({ type: 'string', value: 'N', help });

export const relaySpec = command({
  name: 'relay',
  summary: 'serve a channel’s snapshots to proxies over xDS (gRPC)',
  options: {
    ...storeOptions,
    port: {
      type: 'string',
      value: 'PORT',
      default: '15010',
      help: 'xDS (gRPC) port; 0 picks a free one (see the relay.listening log line)',
    },
    'http-port': {
      type: 'string',
      value: 'PORT',
      default: '15014',
      help: 'HTTP port: /healthz, /readyz, /metrics, /debug/proxies',
    },
    host: { type: 'string', value: 'ADDR', default: '0.0.0.0', help: 'address to listen on' },
    'poll-ms': {
      type: 'string',
      value: 'MS',
      default: '1000',
      help: 'how often to check the channel head (10..3600000)',
    },
    'max-streams': { type: 'string', value: 'N', help: 'refuse xDS streams beyond N (default: 20000)' },
    'relay-id': {
      type: 'string',
      value: 'ID',
      help: 'this relay’s name in the audit log (default: host name and a random suffix)',
    },
    'drain-ms': {
      type: 'string',
      value: 'MS',
      default: '5000',
      help: 'on SIGTERM, how long to wait for streams to end (0..600000)',
    },
    ...logLevelOption,
    'write-timeout-ms': {
      type: 'string',
      value: 'MS',
      help: 'reset a stream whose response is unread this long (100..3600000; default 10000)',
    },
    'slow-write-ms': {
      type: 'string',
      value: 'MS',
      help: 'an unread write gives back its shared slot after MS (default 250)',
    },
    'unready-after-store-failures': {
      type: 'string',
      value: 'N',
      help: '/readyz fails after N store failures in a row (default: never)',
    },
    'max-node-id': limitFlag('longest node id accepted, in characters (default 1024)'),
    'max-node-metadata': limitFlag('largest node metadata accepted, in bytes of JSON (default 65536)'),
    'max-resource-names': limitFlag('most resource names per request or subscription (default 100000)'),
    'max-error-detail': limitFlag('NACK error_detail kept, in characters (default 4096)'),
    'max-requests-per-second': limitFlag('requests per stream per second after the burst (default 50)'),
    'request-burst': limitFlag('requests a stream may send at once (default 200)'),
    'tls-cert': {
      type: 'string',
      value: 'FILE',
      help: 'PEM certificate (chain) of the xDS port; re-read when it changes',
    },
    'tls-key': { type: 'string', value: 'FILE', help: 'PEM private key of --tls-cert; re-read when it changes' },
    'client-ca': {
      type: 'string',
      value: 'FILE',
      help: 'PEM CA bundle: verify client certificates and authenticate proxies by their SPIFFE URI SAN (mTLS)',
    },
    'tls-reload-ms': {
      type: 'string',
      value: 'MS',
      help: 'how often the TLS files are checked for a change (100..3600000; default 5000)',
    },
    insecure: {
      type: 'boolean',
      help: 'serve plaintext xDS and anonymous proxies (no TLS needed); logged and shown on /readyz as INSECURE',
    },
    kube: {
      type: 'boolean',
      help: 'use Kubernetes ($KUBECONFIG, ~/.kube/config or in-cluster): TokenReview and SDS from Secrets',
    },
    kubeconfig: { type: 'string', value: 'FILE', help: 'like --kube, with this kubeconfig' },
    context: { type: 'string', value: 'NAME', help: 'kubeconfig context' },
    jwt: {
      type: 'string',
      value: 'MODE',
      help: 'service-account tokens: review (TokenReview; default with Kubernetes), jwks (offline, issuer discovery), off',
    },
    'jwt-audience': {
      type: 'string',
      value: 'AUD',
      multiple: true,
      help: 'accepted token audience (repeatable; default istio-ca)',
    },
    'jwt-issuer': {
      type: 'string',
      value: 'URL',
      help: 'with --jwt jwks: the issuer (discovery at URL/.well-known/openid-configuration); default: ask the API server',
    },
    'jwt-issuer-ca': {
      type: 'string',
      value: 'FILE',
      help: 'with --jwt-issuer: CA bundle of the issuer’s HTTPS server',
    },
    'trust-domain': {
      type: 'string',
      value: 'DOMAIN',
      default: 'cluster.local',
      help: 'trust domain of identities proven by tokens (spiffe://DOMAIN/ns/NS/sa/SA)',
    },
    'secret-namespace': {
      type: 'string',
      value: 'NS',
      multiple: true,
      help: 'with Kubernetes: watch Secrets only in these namespaces (repeatable; default: the namespaces of authenticated proxies that ask)',
    },
    sds: { type: 'string', value: 'on|off', default: 'on', help: 'with Kubernetes: serve kubernetes:// secrets (SDS)' },
  },
  examples: [
    'meshsnap relay --store s3://bucket/meshsnap --tls-cert /etc/relay/tls.crt --tls-key /etc/relay/tls.key --kube',
    'meshsnap relay --tls-cert tls.crt --tls-key tls.key --client-ca ca.crt --jwt off',
    'meshsnap relay --port 0 --http-port 0 --insecure --log-level debug --max-streams 5000',
  ],
});

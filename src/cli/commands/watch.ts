/**
 * `meshsnap watch [--kubeconfig FILE] [--context NAME] [--store DIR|URL] [--channel main]
 *   [--namespace NS ...] [--compile-url URL] [--debounce-ms 100] [--debounce-max-ms 10000]
 *   [--http-port 15015] [--log-level info]`
 *
 * Watches the cluster and publishes a snapshot to the channel after every debounced change
 * (src/watch/watcher.ts). Without --kubeconfig: $KUBECONFIG, ~/.kube/config, or the in-cluster
 * service account. Logs are JSON lines on stderr (src/log.ts); each published version is one JSON line on
 * stdout. Runs until SIGINT/SIGTERM.
 */
import { loadKubeConfig } from '../kubeconfig.js';
import { createLogger } from '../../log.js';
import { nodeSha256Hex } from '../../snapshot/store/local.js';
import { startWatchHttp } from '../../watch/http.js';
import { RemoteCompiler } from '../../watch/remote-compile.js';
import { Watcher } from '../../watch/watcher.js';
import { logLevelOption, parse, parseLogLevel, storeOptions, UsageError } from '../args.js';
import { printJson } from '../output.js';
import { checkChannel, openStore } from '../store.js';

export const watchUsage =
  'meshsnap watch [--kubeconfig FILE] [--context NAME] [--store DIR|URL] [--channel main] [--namespace NS ...] [--compile-url URL] [--debounce-ms 100] [--debounce-max-ms 10000] [--http-port 15015] [--log-level debug|info|warn|error]';

function nonNegativeInt(name: string, value: string): number {
  if (!/^[0-9]+$/.test(value)) throw new UsageError(`--${name} must be a whole number, got ${JSON.stringify(value)}`);
  return Number(value);
}

export async function watchCommand(argv: readonly string[]): Promise<number> {
  const { values } = parse(
    argv,
    {
      ...storeOptions,
      kubeconfig: { type: 'string' },
      context: { type: 'string' },
      namespace: { type: 'string', multiple: true },
      'compile-url': { type: 'string' },
      'debounce-ms': { type: 'string', default: '100' },
      'debounce-max-ms': { type: 'string', default: '10000' },
      'http-port': { type: 'string', default: '15015' },
      ...logLevelOption,
    },
    { max: 0 },
  );
  const channel = checkChannel(values.channel);
  const quietMs = nonNegativeInt('debounce-ms', values['debounce-ms']);
  const maxDelayMs = nonNegativeInt('debounce-max-ms', values['debounce-max-ms']);
  const httpPort = nonNegativeInt('http-port', values['http-port']);
  if (maxDelayMs < quietMs) throw new UsageError('--debounce-max-ms must not be less than --debounce-ms');
  const compileUrl = values['compile-url'];
  if (compileUrl !== undefined && !/^https?:\/\//.test(compileUrl)) throw new UsageError('--compile-url must be an http(s) URL');

  const log = createLogger({ level: parseLogLevel(values['log-level']) });
  const kc = loadKubeConfig(values.kubeconfig, values.context);

  const watcher = new Watcher({
    kubeConfig: kc,
    store: openStore(values.store),
    channel,
    ...(values.namespace?.length ? { namespaces: values.namespace } : {}),
    ...(compileUrl !== undefined ? { compiler: new RemoteCompiler(compileUrl, { hasher: nodeSha256Hex, ...(process.env.MESHSNAP_COMPILE_TOKEN ? { token: process.env.MESHSNAP_COMPILE_TOKEN } : {}) }) } : {}),
    quietMs,
    maxDelayMs,
    hasher: nodeSha256Hex,
    log: ({ level, event, ...fields }) => {
      log.log(level, event, fields);
      if (event === 'watch.published') printJson({ version: fields.version, digest: fields.digest, mode: fields.mode, status: 'published' });
    },
  });
  const http = await startWatchHttp(httpPort, {
    readiness: () => watcher.readiness(),
    metrics: async () => ({ contentType: watcher.metrics.registry.contentType, body: await watcher.metrics.registry.metrics() }),
  });
  log.info('watch.http_listening', { message: 'health and metrics: /healthz, /readyz, /metrics', port: http.port });
  await watcher.start();

  await new Promise<void>((resolve) => {
    const done = () => resolve();
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
  });
  log.info('watch.stopping');
  await watcher.stop();
  await http.close();
  return 0;
}

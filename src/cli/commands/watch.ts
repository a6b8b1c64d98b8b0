/**
 * `meshsnap watch`: watches the cluster and publishes a snapshot to the channel after every
 * debounced change (src/watch/watcher.ts). Without --kubeconfig: $KUBECONFIG, ~/.kube/config, or
 * the in-cluster service account; none usable is a usage error (exit 2) saying where it looked.
 * Logs are JSON lines on stderr (src/log.ts; `watch.http_listening` with the HTTP port as soon as it
 * listens, before the cluster answers); each published version is one JSON line on stdout. Runs
 * until SIGINT/SIGTERM (then exit 0, even during startup); exit 1 when the watcher cannot start
 * (e.g. the API server does not answer discovery).
 */
import { loadKubeConfig } from '../kubeconfig.js';
import { fullGc } from '../../full-gc.js';
import { createLogger, errorMessage } from '../../log.js';
import { nodeSha256Hex } from '../../snapshot/store/local.js';
import { startWatchHttp } from '../../watch/http.js';
import { RemoteCompiler } from '../../watch/remote-compile.js';
import { InvalidNotifyTargetError, relayNotifier, type RelayNotifier } from '../../watch/relay-notify.js';
import { Watcher } from '../../watch/watcher.js';
import { intFlag, parseCommand, parseLogLevel, UsageError } from '../args.js';
import { printJson } from '../output.js';
import { exitSoon, untilStopSignal } from '../signals.js';
import { checkChannel, openStore } from '../store.js';
import { watchSpec } from '../specs/watch.js';

export async function watchCommand(argv: readonly string[]): Promise<number> {
  const { values } = parseCommand(watchSpec, argv);
  const channel = checkChannel(values.channel);
  const quietMs = intFlag('debounce-ms', values['debounce-ms'], 0);
  const maxDelayMs = intFlag('debounce-max-ms', values['debounce-max-ms'], 0);
  const httpPort = intFlag('http-port', values['http-port'], 0, 65535);
  const statusQps = intFlag('status-qps', values['status-qps'], 1, 10_000);
  if (maxDelayMs < quietMs) throw new UsageError('--debounce-max-ms must not be less than --debounce-ms');
  const compileUrl = values['compile-url'];
  if (compileUrl !== undefined && !/^https?:\/\//.test(compileUrl))
    throw new UsageError('--compile-url must be an http(s) URL');

  if ((values.notify?.length ?? 0) > 64) throw new UsageError('--notify: at most 64 targets');
  let notifier: RelayNotifier | undefined;
  const log = createLogger({ level: parseLogLevel(values['log-level']) });
  try {
    if (values.notify?.length)
      notifier = relayNotifier(values.notify, { log: (level, event, fields) => log.log(level, event, fields) });
  } catch (err) {
    if (err instanceof InvalidNotifyTargetError) throw new UsageError(err.message);
    throw err;
  }
  const kc = loadKubeConfig(values.kubeconfig, values.context);

  const watcher = new Watcher({
    kubeConfig: kc,
    store: openStore(values.store),
    channel,
    ...(values.namespace?.length ? { namespaces: values.namespace } : {}),
    ...(compileUrl !== undefined
      ? {
          compiler: new RemoteCompiler(compileUrl, {
            hasher: nodeSha256Hex,
            ...(process.env.MESHSNAP_COMPILE_TOKEN ? { token: process.env.MESHSNAP_COMPILE_TOKEN } : {}),
          }),
        }
      : {}),
    quietMs,
    maxDelayMs,
    hasher: nodeSha256Hex,
    collect: fullGc(),
    ...(values['write-status'] ? { writeStatus: { qps: statusQps, burst: 2 * statusQps } } : {}),
    log: ({ level, event, ...fields }) => {
      log.log(level, event, fields);
      if (event === 'watch.published') {
        printJson({ version: fields.version, digest: fields.digest, mode: fields.mode, status: 'published' });
        void notifier?.notify(channel);
      }
    },
  });
  const stop = untilStopSignal(); // from here on, a signal stops cleanly and exits 0
  const http = await startWatchHttp(httpPort, {
    readiness: () => watcher.readiness(),
    metrics: async () => ({
      contentType: watcher.metrics.registry.contentType,
      body: await watcher.metrics.registry.metrics(),
    }),
  });
  log.info('watch.http_listening', { message: 'health and metrics: /healthz, /readyz, /metrics', port: http.port });
  const failed = watcher.start().then(
    () => new Promise<never>(() => {}), // started: only a signal ends the command
    (err: unknown) => err,
  );
  const outcome = await Promise.race([stop.then((signal) => ({ signal })), failed.then((error) => ({ error }))]);
  if ('error' in outcome) log.error('watch.start_failed', { error: errorMessage(outcome.error) });
  else log.info('watch.stopping', { signal: outcome.signal });
  await watcher.stop();
  await http.close();
  const code = 'error' in outcome ? 1 : 0;
  exitSoon(code);
  return code;
}

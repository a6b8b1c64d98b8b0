/**
 * `meshsnap relay` (flags: relaySpec; the limit flags are the README's "Limits" table).
 *
 * Serves the channel's snapshots over xDS until SIGTERM/SIGINT, then drains and exits 0. Logs go to
 * stderr as JSON lines; the `relay.listening` line carries the bound ports (so `--port 0` works).
 */
import { createLogger } from '../../log.js';
import type { ClientLimits } from '../../relay/xds/limits.js';
import { startRelay } from '../../relay/relay.js';
import { intFlag, parseCommand, parseLogLevel } from '../args.js';
import { relaySecurity } from '../relay-security.js';
import { checkChannel, openStore } from '../store.js';
import { relaySpec } from '../specs/relay.js';

/** Flags that set one client limit each (README "Limits"). */
const LIMIT_FLAGS: Readonly<Record<string, keyof ClientLimits>> = {
  'max-node-id': 'maxNodeIdLength',
  'max-node-metadata': 'maxNodeMetadataBytes',
  'max-resource-names': 'maxResourceNames',
  'max-error-detail': 'maxErrorDetailLength',
  'max-requests-per-second': 'requestsPerSecond',
  'request-burst': 'requestBurst',
};

export async function relayCommand(argv: readonly string[]): Promise<number> {
  const { values } = parseCommand(relaySpec, argv);
  const channel = checkChannel(values.channel);
  const log = createLogger({ level: parseLogLevel(values['log-level']) });
  const flag = (name: string): string | undefined => (values as Record<string, string | undefined>)[name];
  const limits: Partial<Record<keyof ClientLimits, number>> = {};
  for (const [name, key] of Object.entries(LIMIT_FLAGS)) {
    const v = flag(name);
    if (v !== undefined) limits[key] = intFlag(name, v, 1, 1_000_000_000);
  }
  const optionalInt = (name: string, min: number, max: number): number | undefined => {
    const v = flag(name);
    return v === undefined ? undefined : intFlag(name, v, min, max);
  };
  const writeTimeoutMs = optionalInt('write-timeout-ms', 100, 3_600_000);
  const slowWriteMs = optionalInt('slow-write-ms', 1, 3_600_000);
  const unreadyAfterStoreFailures = optionalInt('unready-after-store-failures', 1, 1_000_000);
  const port = intFlag('port', values.port, 0, 65535);
  const httpPort = intFlag('http-port', values['http-port'], 0, 65535);
  const pollMs = intFlag('poll-ms', values['poll-ms'], 10, 3_600_000);
  const drainTimeoutMs = intFlag('drain-ms', values['drain-ms'], 0, 600_000);
  const { security, secrets } = await relaySecurity(values, log);

  const relay = await startRelay({
    store: openStore(values.store),
    channel,
    host: values.host,
    port,
    httpPort,
    pollMs,
    drainTimeoutMs,
    ...(values['max-streams'] !== undefined
      ? { maxStreams: intFlag('max-streams', values['max-streams'], 1, 10_000_000) }
      : {}),
    ...(values['relay-id'] !== undefined ? { relayId: values['relay-id'] } : {}),
    ...(writeTimeoutMs !== undefined ? { writeTimeoutMs } : {}),
    ...(slowWriteMs !== undefined ? { slowWriteMs } : {}),
    ...(unreadyAfterStoreFailures !== undefined ? { unreadyAfterStoreFailures } : {}),
    limits,
    log,
    security,
    ...(secrets ? { secrets } : {}),
  });

  return new Promise<number>((resolve) => {
    let signalled = false;
    const onSignal = (signal: NodeJS.Signals): void => {
      if (signalled) {
        log.log('warn', 'relay.forced_exit', { signal });
        process.exit(1); // a second signal: the operator does not want to wait for the drain
      }
      signalled = true;
      log.log('info', 'relay.signal', { signal });
      void relay.close().then(() => {
        process.off('SIGTERM', onSignal);
        process.off('SIGINT', onSignal);
        // Everything is closed; should a library keep a handle open, don't let it hold the exit.
        setTimeout(() => process.exit(0), 2000).unref();
        resolve(0);
      });
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}

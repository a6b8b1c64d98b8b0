/**
 * `meshsnap relay [--store DIR|URL] [--channel main] [--port 15010] [--http-port 15014] [--host 0.0.0.0]
 *  [--poll-ms 1000] [--max-streams N] [--relay-id ID] [--drain-ms 5000] [--log-level info]
 *  [limit flags: see LIMIT_FLAGS and the README's "Limits" table]`
 *
 * Serves the channel's snapshots over xDS until SIGTERM/SIGINT, then drains and exits 0. Logs go to
 * stderr as JSON lines; the `relay.listening` line carries the bound ports (so `--port 0` works).
 */
import { createLogger } from '../../log.js';
import type { ClientLimits } from '../../relay/xds/limits.js';
import { startRelay } from '../../relay/relay.js';
import { logLevelOption, parse, parseLogLevel, storeOptions, UsageError } from '../args.js';
import { checkChannel, openStore } from '../store.js';

export const relayUsage =
  'meshsnap relay [--store DIR|URL] [--channel main] [--port 15010] [--http-port 15014] [--host 0.0.0.0] [--poll-ms 1000] [--max-streams N] [--relay-id ID] [--drain-ms 5000] [--log-level debug|info|warn|error] [--write-timeout-ms 10000] [--slow-write-ms 250] [--max-node-id 1024] [--max-node-metadata 65536] [--max-resource-names 100000] [--max-error-detail 4096] [--max-requests-per-second 50] [--request-burst 200] [--unready-after-store-failures N]';

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
  const { values } = parse(
    argv,
    {
      ...storeOptions,
      port: { type: 'string', default: '15010' },
      'http-port': { type: 'string', default: '15014' },
      host: { type: 'string', default: '0.0.0.0' },
      'poll-ms': { type: 'string', default: '1000' },
      'max-streams': { type: 'string' },
      'relay-id': { type: 'string' },
      'drain-ms': { type: 'string', default: '5000' },
      ...logLevelOption,
      'write-timeout-ms': { type: 'string' },
      'slow-write-ms': { type: 'string' },
      'unready-after-store-failures': { type: 'string' },
      ...Object.fromEntries(Object.keys(LIMIT_FLAGS).map((f) => [f, { type: 'string' as const }])),
    },
    { max: 0 },
  );
  const channel = checkChannel(values.channel);
  const log = createLogger({ level: parseLogLevel(values['log-level']) });
  const flag = (name: string): string | undefined => (values as Record<string, string | undefined>)[name];
  const limits: Partial<Record<keyof ClientLimits, number>> = {};
  for (const [name, key] of Object.entries(LIMIT_FLAGS)) {
    const v = flag(name);
    if (v !== undefined) limits[key] = intOption(`--${name}`, v, 1, 1_000_000_000);
  }
  const optionalInt = (name: string, min: number, max: number): number | undefined => {
    const v = flag(name);
    return v === undefined ? undefined : intOption(`--${name}`, v, min, max);
  };
  const writeTimeoutMs = optionalInt('write-timeout-ms', 100, 3_600_000);
  const slowWriteMs = optionalInt('slow-write-ms', 1, 3_600_000);
  const unreadyAfterStoreFailures = optionalInt('unready-after-store-failures', 1, 1_000_000);

  const relay = await startRelay({
    store: openStore(values.store),
    channel,
    host: values.host,
    port: intOption('--port', values.port, 0, 65535),
    httpPort: intOption('--http-port', values['http-port'], 0, 65535),
    pollMs: intOption('--poll-ms', values['poll-ms'], 10, 3_600_000),
    drainTimeoutMs: intOption('--drain-ms', values['drain-ms'], 0, 600_000),
    ...(values['max-streams'] !== undefined ? { maxStreams: intOption('--max-streams', values['max-streams'], 1, 10_000_000) } : {}),
    ...(values['relay-id'] !== undefined ? { relayId: values['relay-id'] } : {}),
    ...(writeTimeoutMs !== undefined ? { writeTimeoutMs } : {}),
    ...(slowWriteMs !== undefined ? { slowWriteMs } : {}),
    ...(unreadyAfterStoreFailures !== undefined ? { unreadyAfterStoreFailures } : {}),
    limits,
    log,
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

function intOption(name: string, value: string, min: number, max: number): number {
  if (!/^\d+$/.test(value)) throw new UsageError(`${name}: not a number: ${JSON.stringify(value)}`);
  const n = Number(value);
  if (n < min || n > max) throw new UsageError(`${name}: ${n} is out of range ${min}..${max}`);
  return n;
}

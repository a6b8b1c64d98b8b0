/**
 * `meshsnap serve [--store DIR|URL] [--channel main] [--host 0.0.0.0] [--http-port 8080]
 *   [--relay-port 15010] [--relay-http-port 15014] [--kubeconfig FILE] [--context NAME]
 *   [--no-watch] [--no-relay] [--trust-actor-header] [--log-level info]`
 *
 * The simplest install: one Node process running the watcher, the relay and the HTTP API with
 * its audit page (at /) over one store. Tokens come from the environment, never from flags (flags show
 * up in `ps`): MESHSNAP_WRITE_TOKEN, alias MESHSNAP_API_TOKEN (writes; a random one is generated and printed once when unset)
 * and MESHSNAP_API_READ_TOKEN (when set, reads need a token too). Logs are JSON lines on stderr (src/log.ts);
 * the `serve.listening` line carries the bound ports (so port 0 works). SIGTERM/SIGINT: stop the
 * watcher, drain the relay, close the API, exit 0.
 */
import { randomBytes } from 'node:crypto';
import { loadKubeConfig } from '../kubeconfig.js';
import { createLogger, errorMessage } from '../../log.js';
import { createApp } from '../../api/app.js';
import { actorHeaderIdentity, tokenIdentity } from '../../api/auth.js';
import { startApiServer } from '../../api/node-server.js';
import { mountUi } from '../../api/ui/mount.js';
import { startRelay, type Relay } from '../../relay/relay.js';
import { nodeSha256Hex } from '../../snapshot/store/local.js';
import { Watcher } from '../../watch/watcher.js';
import { logLevelOption, parse, parseLogLevel, storeOptions, UsageError } from '../args.js';
import { checkChannel, openStore } from '../store.js';

export const serveUsage =
  'meshsnap serve [--store DIR|URL] [--channel main] [--host 0.0.0.0] [--http-port 8080] [--relay-port 15010] [--relay-http-port 15014] [--kubeconfig FILE] [--context NAME] [--no-watch] [--no-relay] [--trust-actor-header] [--log-level debug|info|warn|error]';

function port(name: string, value: string): number {
  if (!/^[0-9]{1,5}$/.test(value) || Number(value) > 65535) throw new UsageError(`--${name}: not a port: ${JSON.stringify(value)}`);
  return Number(value);
}

export async function serveCommand(argv: readonly string[]): Promise<number> {
  const { values } = parse(
    argv,
    {
      ...storeOptions,
      host: { type: 'string', default: '0.0.0.0' },
      'http-port': { type: 'string', default: '8080' },
      'relay-port': { type: 'string', default: '15010' },
      'relay-http-port': { type: 'string', default: '15014' },
      kubeconfig: { type: 'string' },
      context: { type: 'string' },
      'no-watch': { type: 'boolean', default: false },
      'no-relay': { type: 'boolean', default: false },
      'trust-actor-header': { type: 'boolean', default: false },
      ...logLevelOption,
    },
    { max: 0 },
  );
  const channel = checkChannel(values.channel);
  const httpPort = port('http-port', values['http-port']);
  const relayPort = port('relay-port', values['relay-port']);
  const relayHttpPort = port('relay-http-port', values['relay-http-port']);
  const store = openStore(values.store);
  const log = createLogger({ level: parseLogLevel(values['log-level']) });

  // MESHSNAP_WRITE_TOKEN is the name the Worker and the Lambda use too; MESHSNAP_API_TOKEN is kept as an alias.
  let writeToken = process.env.MESHSNAP_WRITE_TOKEN ?? process.env.MESHSNAP_API_TOKEN ?? '';
  if (writeToken === '') {
    writeToken = randomBytes(24).toString('base64url');
    // Printed once so a first run is usable; set MESHSNAP_WRITE_TOKEN to keep one across restarts.
    log.log('warn', 'serve.generated_token', { token: writeToken, hint: 'set MESHSNAP_WRITE_TOKEN to choose the write token' });
  }
  const readToken = process.env.MESHSNAP_API_READ_TOKEN || undefined;

  let watcher: Watcher | undefined;
  if (!values['no-watch']) {
    const kc = loadKubeConfig(values.kubeconfig, values.context);
    watcher = new Watcher({ kubeConfig: kc, store, channel, hasher: nodeSha256Hex, log: ({ level, event, ...fields }) => log.log(level, event, fields) });
  }

  let relay: Relay | undefined;
  if (!values['no-relay']) relay = await startRelay({ store, channel, host: values.host, port: relayPort, httpPort: relayHttpPort, log });

  const app = createApp({
    store,
    channelDefault: channel,
    auth: { writeToken: [{ name: 'api', token: writeToken }], ...(readToken ? { readToken } : {}) },
    identity: values['trust-actor-header'] ? actorHeaderIdentity : tokenIdentity,
    compile: { hasher: nodeSha256Hex },
    onInternalError: (err) => log.error('api.internal_error', { error: errorMessage(err), stack: (err as Error).stack }),
  });
  mountUi(app); // the audit page at /
  const api = await startApiServer(app, { host: values.host, port: httpPort });
  if (watcher) await watcher.start();
  log.log('info', 'serve.listening', { channel, api: api.port, relay: relay?.port ?? null, relayHttp: relay?.httpPort ?? null, watch: watcher !== undefined });

  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  log.info('serve.stopping');
  await watcher?.stop();
  await relay?.close();
  await api.close();
  // Everything is closed; should a library keep a handle open, don't let it hold the exit.
  setTimeout(() => process.exit(0), 2000).unref();
  return 0;
}

/**
 * `meshsnap serve`: the simplest install: one Node process running the watcher, the relay and the
 * HTTP API with its audit page (at / of the API port) over one store. Tokens come from the
 * environment, never from flags (flags show up in `ps`): MESHSNAP_WRITE_TOKEN, alias
 * MESHSNAP_API_TOKEN (writes; a random one is generated and printed once when unset) and
 * MESHSNAP_API_READ_TOKEN (when set, reads need a token too). Logs are JSON lines on stderr; the
 * `serve.listening` line carries the bound ports (so port 0 works) as soon as they listen, before
 * the watcher has reached the cluster. A missing or unusable kubeconfig is a usage error (exit 2)
 * unless --no-watch. SIGTERM/SIGINT, at any time: stop the watcher, drain the relay, close the API,
 * exit 0.
 */
import { randomBytes } from 'node:crypto';
import { loadKubeConfig } from '../kubeconfig.js';
import { fullGc } from '../../full-gc.js';
import { createLogger, errorMessage } from '../../log.js';
import { createApp } from '../../api/app.js';
import { actorHeaderIdentity, tokenIdentity } from '../../api/auth.js';
import { startApiServer } from '../../api/node-server.js';
import { mountUi } from '../../api/ui/mount.js';
import { workerRunner } from '../../api/worker-runner.js';
import { startRelay, type Relay } from '../../relay/relay.js';
import { nodeSha256Hex } from '../../snapshot/store/local.js';
import { Watcher } from '../../watch/watcher.js';
import { intFlag, parseCommand, parseLogLevel } from '../args.js';
import { exitSoon, untilStopSignal } from '../signals.js';
import { checkChannel, openStore, storeSpec } from '../store.js';
import { serveSpec } from '../specs/serve.js';

export async function serveCommand(argv: readonly string[]): Promise<number> {
  const { values } = parseCommand(serveSpec, argv);
  const channel = checkChannel(values.channel);
  const httpPort = intFlag('http-port', values['http-port'], 0, 65535);
  const relayPort = intFlag('relay-port', values['relay-port'], 0, 65535);
  const relayHttpPort = intFlag('relay-http-port', values['relay-http-port'], 0, 65535);
  const store = openStore(values.store);
  const log = createLogger({ level: parseLogLevel(values['log-level']) });

  // MESHSNAP_WRITE_TOKEN is the name the Worker and the Lambda use too; MESHSNAP_API_TOKEN is kept as an alias.
  let writeToken = process.env.MESHSNAP_WRITE_TOKEN ?? process.env.MESHSNAP_API_TOKEN ?? '';
  if (writeToken === '') {
    writeToken = randomBytes(24).toString('base64url');
    // Printed once so a first run is usable; set MESHSNAP_WRITE_TOKEN to keep one across restarts.
    log.log('warn', 'serve.generated_token', {
      token: writeToken,
      hint: 'set MESHSNAP_WRITE_TOKEN to choose the write token',
    });
  }
  const readToken = process.env.MESHSNAP_API_READ_TOKEN || undefined;

  let watcher: Watcher | undefined;
  let relay: Relay | undefined;
  if (!values['no-watch']) {
    const kc = loadKubeConfig(
      values.kubeconfig,
      values.context,
      'pass --kubeconfig FILE, or --no-watch to serve without a cluster',
    );
    watcher = new Watcher({
      kubeConfig: kc,
      store,
      channel,
      hasher: nodeSha256Hex,
      collect: fullGc(),
      log: ({ level, event, ...fields }) => {
        log.log(level, event, fields);
        // The relay in this process reads the new head now, whatever the store (no poll delay).
        if (event === 'watch.published') relay?.follower.hint();
      },
    });
  }

  // From here on, a signal drains and exits 0 (before: a usage error has already returned).
  const stop = untilStopSignal();
  if (!values['no-relay'])
    relay = await startRelay({ store, channel, host: values.host, port: relayPort, httpPort: relayHttpPort, log });

  // Compile and diff run in worker threads: a large one must not stall the relay's event loop.
  const offload = workerRunner({ storeSpec: storeSpec(values.store) });
  const app = createApp({
    store,
    channelDefault: channel,
    auth: { writeToken: [{ name: 'api', token: writeToken }], ...(readToken ? { readToken } : {}) },
    identity: values['trust-actor-header'] ? actorHeaderIdentity : tokenIdentity,
    compile: { hasher: nodeSha256Hex },
    offload,
    onInternalError: (err) =>
      log.error('api.internal_error', { error: errorMessage(err), stack: (err as Error).stack }),
  });
  mountUi(app); // the audit page at /
  const api = await startApiServer(app, { host: values.host, port: httpPort });
  log.log('info', 'serve.listening', {
    channel,
    api: api.port,
    relay: relay?.port ?? null,
    relayHttp: relay?.httpPort ?? null,
    watch: watcher !== undefined,
  });
  // The watcher starts after the ports are announced: an unreachable cluster must not hide them.
  watcher?.start().catch(async (err: unknown) => {
    log.error('serve.watch_failed', {
      error: errorMessage(err),
      hint: 'the API and relay keep serving the stored versions; fix the cluster access and restart',
    });
    await watcher?.stop();
  });

  const signal = await stop;
  log.log('info', 'serve.stopping', { signal });
  await watcher?.stop();
  await relay?.close();
  await api.close();
  await offload.close();
  exitSoon(0);
  return 0;
}

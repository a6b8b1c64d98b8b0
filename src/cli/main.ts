/** The `meshsnap` command line. Exit codes: 0 ok, 1 failed, 2 usage. */
import { compileCommand, compileUsage } from './commands/compile.js';
import { demoCommand, demoUsage } from './commands/demo.js';
import { diagnosticsCommand, diagnosticsUsage } from './commands/diagnostics.js';
import { logCommand, logUsage } from './commands/log.js';
import { relayCommand, relayUsage } from './commands/relay.js';
import { showCommand, showUsage } from './commands/show.js';
import { watchCommand, watchUsage } from './commands/watch.js';
import { bootstrapCommand, bootstrapUsage } from './commands/bootstrap.js';
import { UsageError } from './args.js';
import { serveCommand, serveUsage } from './commands/serve.js';
import { auditCommand, auditUsage } from './commands/audit.js';
import { diffCommand, diffUsage } from './commands/diff.js';
import { gcCommand, gcUsage } from './commands/gc.js';
import { guardCommand, guardUsage } from './commands/guard.js';
import { pinCommand, pinUsage } from './commands/pin.js';
import { promoteCommand, promoteUsage } from './commands/promote.js';
import { rollbackCommand, rollbackUsage } from './commands/rollback.js';
import { tagCommand, tagUsage } from './commands/tag.js';
import { unpinCommand, unpinUsage } from './commands/unpin.js';
import { verifyCommand, verifyUsage } from './commands/verify.js';

type Command = { run: (argv: readonly string[]) => Promise<number>; usage: string; summary: string };

const COMMANDS: Record<string, Command> = {
  compile: { run: compileCommand, usage: compileUsage, summary: 'compile Istio config + services into a stored snapshot' },
  log: { run: logCommand, usage: logUsage, summary: 'list a channel’s versions, newest first' },
  show: { run: showCommand, usage: showUsage, summary: 'print what a proxy would be served (config_dump JSON)' },
  diagnostics: { run: diagnosticsCommand, usage: diagnosticsUsage, summary: 'print a version’s diagnostics' },
  demo: { run: demoCommand, usage: demoUsage, summary: 'compile the bundled example mesh and summarize a proxy’s config' },
  relay: { run: relayCommand, usage: relayUsage, summary: 'serve a channel’s snapshots to proxies over xDS (gRPC)' },
  watch: { run: watchCommand, usage: watchUsage, summary: 'watch a cluster and publish a snapshot after every debounced change' },
  bootstrap: { run: bootstrapCommand, usage: bootstrapUsage, summary: 'print an Envoy and a proxyless gRPC bootstrap pointing at the relay' },
  serve: { run: serveCommand, usage: serveUsage, summary: 'run watch + relay + HTTP API (and audit page) in one process' },
  diff: { run: diffCommand, usage: diffUsage, summary: 'what changed between two versions, per proxy class and xDS type, and in the inputs' },
  rollback: { run: rollbackCommand, usage: rollbackUsage, summary: 'serve an earlier version’s config with the current endpoints (pins the channel)' },
  pin: { run: pinCommand, usage: pinUsage, summary: 'keep serving a version’s config; config changes become candidates' },
  unpin: { run: unpinCommand, usage: unpinUsage, summary: 'follow the cluster’s config again' },
  promote: { run: promoteCommand, usage: promoteUsage, summary: 'serve a candidate recorded while pinned' },
  verify: { run: verifyCommand, usage: verifyUsage, summary: 'recompile a version from its stored inputs and check the digest is identical' },
  tag: { run: tagCommand, usage: tagUsage, summary: 'name a version (e.g. a git SHA); list or delete tags' },
  guard: { run: guardCommand, usage: guardUsage, summary: 'show or set how much a publish may shrink the mesh before it is refused' },
  gc: { run: gcCommand, usage: gcUsage, summary: 'delete old versions and unreferenced data (tagged, pinned, current are kept)' },
  audit: { run: auditCommand, usage: auditUsage, summary: 'publishes, rollbacks, pins, promotions, tags, gc runs and relay ACK/NACKs' },
};

function usage(): string {
  const lines = ['usage: meshsnap <command> [options]', '', 'commands:'];
  for (const [name, c] of Object.entries(COMMANDS)) lines.push(`  ${name.padEnd(12)} ${c.summary}`);
  lines.push('', ...Object.values(COMMANDS).map((c) => `  ${c.usage}`));
  return lines.join('\n');
}

export async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    process.stdout.write(`${usage()}\n`);
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`meshsnap: unknown command ${JSON.stringify(name)}\n${usage()}\n`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(`usage: ${command.usage}\n`);
    return 0;
  }
  try {
    return await command.run(rest);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`meshsnap ${name}: ${err.message}\nusage: ${command.usage}\n`);
      return 2;
    }
    process.stderr.write(`meshsnap ${name}: ${(err as Error).message ?? String(err)}\n`);
    return 1;
  }
}

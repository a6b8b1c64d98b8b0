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

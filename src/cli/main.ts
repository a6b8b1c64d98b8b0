/** The `meshsnap` command line. Exit codes: 0 ok, 1 failed, 2 usage. */
import { createRequire } from 'node:module';
import { COMPILER } from '../version.js';
import { helpText, UsageError, usageLine, type CommandSpec } from './args.js';
import { terminalSafe } from './output.js';
import { auditCommand, auditSpec } from './commands/audit.js';
import { bootstrapCommand, bootstrapSpec } from './commands/bootstrap.js';
import { compileCommand, compileSpec } from './commands/compile.js';
import { demoCommand, demoSpec } from './commands/demo.js';
import { diagnosticsCommand, diagnosticsSpec } from './commands/diagnostics.js';
import { diffCommand, diffSpec } from './commands/diff.js';
import { gcCommand, gcSpec } from './commands/gc.js';
import { guardCommand, guardSpec } from './commands/guard.js';
import { logCommand, logSpec } from './commands/log.js';
import { pinCommand, pinSpec } from './commands/pin.js';
import { promoteCommand, promoteSpec } from './commands/promote.js';
import { relayCommand, relaySpec } from './commands/relay.js';
import { rollbackCommand, rollbackSpec } from './commands/rollback.js';
import { serveCommand, serveSpec } from './commands/serve.js';
import { showCommand, showSpec } from './commands/show.js';
import { tagCommand, tagSpec } from './commands/tag.js';
import { unpinCommand, unpinSpec } from './commands/unpin.js';
import { verifyCommand, verifySpec } from './commands/verify.js';
import { watchCommand, watchSpec } from './commands/watch.js';

interface Command {
  readonly spec: CommandSpec;
  readonly run: (argv: readonly string[]) => Promise<number>;
}

/** In the order `meshsnap --help` lists them. */
export const COMMANDS: readonly Command[] = [
  { spec: compileSpec, run: compileCommand },
  { spec: logSpec, run: logCommand },
  { spec: showSpec, run: showCommand },
  { spec: diagnosticsSpec, run: diagnosticsCommand },
  { spec: demoSpec, run: demoCommand },
  { spec: relaySpec, run: relayCommand },
  { spec: watchSpec, run: watchCommand },
  { spec: bootstrapSpec, run: bootstrapCommand },
  { spec: serveSpec, run: serveCommand },
  { spec: diffSpec, run: diffCommand },
  { spec: rollbackSpec, run: rollbackCommand },
  { spec: pinSpec, run: pinCommand },
  { spec: unpinSpec, run: unpinCommand },
  { spec: promoteSpec, run: promoteCommand },
  { spec: verifySpec, run: verifyCommand },
  { spec: tagSpec, run: tagCommand },
  { spec: gcSpec, run: gcCommand },
  { spec: guardSpec, run: guardCommand },
  { spec: auditSpec, run: auditCommand },
];

const byName = (name: string): Command | undefined => COMMANDS.find((c) => c.spec.name === name);

function usage(): string {
  const lines = ['usage: meshsnap <command> [options]', '       meshsnap <command> --help   (or meshsnap help <command>): every flag, with examples', '       meshsnap --version', '', 'commands:'];
  for (const { spec } of COMMANDS) lines.push(`  ${spec.name.padEnd(12)} ${spec.summary}`);
  return lines.join('\n');
}

/** `meshsnap <package version> (compiler <name> <version>)`. */
export function versionText(): string {
  const pkg = createRequire(import.meta.url)('../../../package.json') as { version: string };
  return `meshsnap ${pkg.version} (compiler ${COMPILER.name} ${COMPILER.version})`;
}

export async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-V' || name === 'version') {
    process.stdout.write(`${versionText()}\n`);
    return 0;
  }
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    const topic = name === 'help' ? rest[0] : undefined;
    if (topic !== undefined) {
      const command = byName(topic);
      if (!command) return unknown(topic);
      process.stdout.write(`${helpText(command.spec)}\n`);
      return 0;
    }
    process.stdout.write(`${usage()}\n`);
    return name === undefined ? 2 : 0;
  }
  const command = byName(name);
  if (!command) return unknown(name);
  // Before parsing, so `--help` works next to a flag that is missing or wrong.
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(`${helpText(command.spec)}\n`);
    return 0;
  }
  try {
    return await command.run(rest);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`meshsnap ${name}: ${terminalSafe(err.message)}\nusage: ${usageLine(command.spec)}\n(meshsnap ${name} --help lists every flag)\n`);
      return 2;
    }
    process.stderr.write(`meshsnap ${name}: ${terminalSafe((err as Error).message ?? String(err))}\n`);
    return 1;
  }
}

function unknown(name: string): number {
  process.stderr.write(`meshsnap: unknown command ${JSON.stringify(name)}\n${usage()}\n`);
  return 2;
}

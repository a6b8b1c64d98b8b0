/** The `meshsnap` command line. Exit codes: 0 ok, 1 failed, 2 usage. */
import { createRequire } from 'node:module';
import { COMPILER } from '../version.js';
import { helpText, UsageError, usageLine, type CommandSpec } from './args.js';
import { terminalSafe } from './output.js';
import { auditSpec } from './specs/audit.js';
import { bootstrapSpec } from './specs/bootstrap.js';
import { compileSpec } from './specs/compile.js';
import { demoSpec } from './specs/demo.js';
import { diagnosticsSpec } from './specs/diagnostics.js';
import { diffSpec } from './specs/diff.js';
import { explainSpec } from './specs/explain.js';
import { gcSpec } from './specs/gc.js';
import { guardSpec } from './specs/guard.js';
import { logSpec } from './specs/log.js';
import { pinSpec } from './specs/pin.js';
import { promoteSpec } from './specs/promote.js';
import { relaySpec } from './specs/relay.js';
import { rollbackSpec } from './specs/rollback.js';
import { serveSpec } from './specs/serve.js';
import { showSpec } from './specs/show.js';
import { tagSpec } from './specs/tag.js';
import { unpinSpec } from './specs/unpin.js';
import { verifySpec } from './specs/verify.js';
import { watchSpec } from './specs/watch.js';

type Run = (argv: readonly string[]) => Promise<number>;

interface Command {
  readonly spec: CommandSpec;
  /** The implementation, imported only when the command runs: `relay` never loads the compiler. */
  readonly load: () => Promise<Run>;
}

/** In the order `meshsnap --help` lists them. */
export const COMMANDS: readonly Command[] = [
  { spec: compileSpec, load: async () => (await import('./commands/compile.js')).compileCommand },
  { spec: logSpec, load: async () => (await import('./commands/log.js')).logCommand },
  { spec: showSpec, load: async () => (await import('./commands/show.js')).showCommand },
  { spec: explainSpec, load: async () => (await import('./commands/explain.js')).explainCommand },
  { spec: diagnosticsSpec, load: async () => (await import('./commands/diagnostics.js')).diagnosticsCommand },
  { spec: demoSpec, load: async () => (await import('./commands/demo.js')).demoCommand },
  { spec: relaySpec, load: async () => (await import('./commands/relay.js')).relayCommand },
  { spec: watchSpec, load: async () => (await import('./commands/watch.js')).watchCommand },
  { spec: bootstrapSpec, load: async () => (await import('./commands/bootstrap.js')).bootstrapCommand },
  { spec: serveSpec, load: async () => (await import('./commands/serve.js')).serveCommand },
  { spec: diffSpec, load: async () => (await import('./commands/diff.js')).diffCommand },
  { spec: rollbackSpec, load: async () => (await import('./commands/rollback.js')).rollbackCommand },
  { spec: pinSpec, load: async () => (await import('./commands/pin.js')).pinCommand },
  { spec: unpinSpec, load: async () => (await import('./commands/unpin.js')).unpinCommand },
  { spec: promoteSpec, load: async () => (await import('./commands/promote.js')).promoteCommand },
  { spec: verifySpec, load: async () => (await import('./commands/verify.js')).verifyCommand },
  { spec: tagSpec, load: async () => (await import('./commands/tag.js')).tagCommand },
  { spec: gcSpec, load: async () => (await import('./commands/gc.js')).gcCommand },
  { spec: guardSpec, load: async () => (await import('./commands/guard.js')).guardCommand },
  { spec: auditSpec, load: async () => (await import('./commands/audit.js')).auditCommand },
];

const byName = (name: string): Command | undefined => COMMANDS.find((c) => c.spec.name === name);

function usage(): string {
  const lines = [
    'usage: meshsnap <command> [options]',
    '       meshsnap <command> --help   (or meshsnap help <command>): every flag, with examples',
    '       meshsnap --version',
    '',
    'commands:',
  ];
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
    const run = await command.load();
    return await run(rest);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(
        `meshsnap ${name}: ${terminalSafe(err.message)}\nusage: ${usageLine(command.spec)}\n(meshsnap ${name} --help lists every flag)\n`,
      );
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

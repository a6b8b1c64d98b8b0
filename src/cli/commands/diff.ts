/**
 * `meshsnap diff <A> <B> [--node ID [--metadata JSON]] [--type …] [--json | --jsonl]`. With --node, the
 * class chosen in each version is named (first line, or `node` in the JSON) and a fallback to
 * the namespace's `sidecar/<ns>/_` is warned about on stderr. --jsonl streams one line per entry.
 */
import { once } from 'node:events';
import { diffLines, diffVersions, formatVersionDiff } from '../../history/diff/index.js';
import { selectArg } from '../history.js';
import { parseCommand, UsageError } from '../args.js';
import { classOfNode, warnOnFallback } from '../node-class.js';
import { printJson, printText } from '../output.js';
import { checkChannel, openExistingStore } from '../store.js';
import { parseMetadata, parseTypes } from './show.js';
import { diffSpec } from '../specs/diff.js';

export async function diffCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(diffSpec, argv);
  if (values.metadata !== undefined && values.node === undefined)
    throw new UsageError('--metadata needs --node (it describes that proxy)');
  if (values.json && values.jsonl) throw new UsageError('--json and --jsonl: pick one');
  const channel = checkChannel(values.channel);
  const types = parseTypes(values.type);
  const node = values.node !== undefined ? { id: values.node, metadata: parseMetadata(values.metadata) } : undefined;
  const store = openExistingStore(values.store);
  const a = await selectArg(store, channel, positionals[0]);
  const b = await selectArg(store, channel, positionals[1]);
  const d = await diffVersions(store, a, b, { types, ...(node ? { node } : {}) });
  let nodeLine: { id: string; classFrom: string | null; classTo: string | null } | undefined;
  if (node) {
    const [from, to] = [await classOfNode(store, a.digest, node), await classOfNode(store, b.digest, node)];
    nodeLine = { id: node.id, classFrom: from ?? null, classTo: to ?? null };
    warnOnFallback(to ?? from, node);
  }
  if (values.jsonl) await writeLines(diffLines(d, nodeLine ? { node: nodeLine } : {}));
  else if (values.json) printJson(nodeLine ? { node: nodeLine, ...d } : d);
  else
    printText(
      `${nodeLine ? `node ${nodeLine.id}: class ${classText(nodeLine.classFrom, nodeLine.classTo)}\n` : ''}${formatVersionDiff(d)}`,
    );
  return 0;
}

const classText = (from: string | null, to: string | null): string =>
  from === to ? String(from) : `${from ?? '(none)'} → ${to ?? '(none)'}`;

/** One JSON line per entry, waiting for stdout to drain (a large diff is never one string). */
async function writeLines(lines: Iterable<unknown>): Promise<void> {
  for (const line of lines) if (!process.stdout.write(`${JSON.stringify(line)}\n`)) await once(process.stdout, 'drain');
}

/**
 * `meshsnap explain [VERSION] (--node ID [--metadata JSON] | --pod NS/NAME) --to HOST:PORT [request flags] [--across A..B] [--text]`
 *
 * Where a request from a proxy goes through the config stored as VERSION, and why (src/explain/,
 * the same answer as GET …/snapshots/:v/explain); `--across` asks a range of versions.
 */
import { explainAcross, explainVersion } from '../../api/explain.js';
import { parseExplainQuery, parseRange, type ExplainQueryFields } from '../../api/explain-query.js';
import { hasErrorCode } from '../../errors.js';
import { acrossText, explanationText } from '../../explain/index.js';
import { parseCommand, UsageError } from '../args.js';
import { selectArg } from '../history.js';
import { note, printJson, printText } from '../output.js';
import { checkChannel, openExistingStore } from '../store.js';
import { explainSpec } from '../specs/explain.js';
import { parseMetadata } from './show.js';

const flag = (field: string): string => `--${field}`;

/** A refused question is a usage error (exit 2), as any other bad flag. */
function asUsage<T>(f: () => T): T {
  try {
    return f();
  } catch (err) {
    if (hasErrorCode(err) && err.code === 'bad_request') throw new UsageError(err.message);
    throw err;
  }
}

export async function explainCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(explainSpec, argv);
  const fields: ExplainQueryFields = {
    ...(values.node !== undefined ? { node: values.node } : {}),
    ...(values.metadata !== undefined ? { metadata: parseMetadata(values.metadata) } : {}),
    ...(values.pod !== undefined ? { pod: values.pod } : {}),
    to: values.to as string,
    path: values.path as string,
    method: values.method as string,
    headers: values.header ?? [],
    tls: values.tls === true,
    ...(values.sni !== undefined ? { sni: values.sni } : {}),
    ...(values.protocol !== undefined ? { protocol: values.protocol } : {}),
    inbound: values.inbound === true,
  };
  const query = asUsage(() => parseExplainQuery(fields, flag));
  const channel = checkChannel(values.channel);
  const store = openExistingStore(values.store);
  if (positionals[0] !== undefined && values.version !== undefined)
    throw new UsageError('give the VERSION argument or --version, not both');
  const version = positionals[0] ?? values.version;
  if (values.across !== undefined) {
    if (version !== undefined) throw new UsageError('give VERSION or --across, not both');
    const range = asUsage(() => parseRange(values.across as string, flag));
    for (const spec of [range.from, range.to]) await selectArg(store, channel, spec);
    const answer = await asUsageAsync(() => explainAcross(store, channel, range, query, flag));
    if (values.text) printText(acrossText(answer).trimEnd());
    else printJson(answer);
    return 0;
  }
  const record = await selectArg(store, channel, version);
  const answer = await explainVersion(store, record, query);
  note(`version ${answer.version} (${answer.digest}), node ${answer.node.id}, proxy class ${answer.node.class}`);
  if (values.text) printText(explanationText(answer).trimEnd());
  else printJson(answer);
  return 0;
}

async function asUsageAsync<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (err) {
    if (hasErrorCode(err) && err.code === 'bad_request') throw new UsageError(err.message);
    throw err;
  }
}

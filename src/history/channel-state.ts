/**
 * Channel state: the mutable part of a channel's history — the pin and the tags. Stored as
 * numbered, create-only revisions (`putChannelState`), each holding the whole state: writing
 * revision n+1 fails when another writer took it, so an update is a compare-and-swap that
 * re-reads and re-applies its change. Version records stay immutable.
 *
 * How the relay finds the served version: unchanged — the channel head. Only served versions are
 * published to the channel (rollbacks, promotions and pinned endpoint updates are new served
 * versions); candidates are published to the sibling channel `<channel>.candidates`, so the head
 * never points at one.
 */
import type { ChannelReader, ChannelWriter } from '../snapshot/store/store.js';
import { HistoryError } from './errors.js';
import type { GuardPolicy } from './guard.js';

export const CHANNEL_STATE_SCHEMA = 'meshsnap.channel-state/v1';

export interface Pin {
  /** The version whose config layer is served while pinned. */
  readonly version: number;
  readonly actor: string;
  /** ISO 8601. */
  readonly at: string;
  readonly reason?: string;
}

export interface ChannelState {
  readonly schema: typeof CHANNEL_STATE_SCHEMA;
  readonly channel: string;
  readonly pin?: Pin;
  /** Tag name → version (a Map: tag names are user input, `toString` is a tag like any other). */
  readonly tags: ReadonlyMap<string, number>;
  /** The publish guard's threshold for this channel (absent: the default, guard.ts). */
  readonly guard?: GuardPolicy;
}

export const emptyState = (channel: string): ChannelState => ({
  schema: CHANNEL_STATE_SCHEMA,
  channel,
  tags: new Map(),
});

const decoder = new TextDecoder();

export async function readChannelState(
  store: Pick<ChannelReader, 'getChannelState'>,
  channel: string,
): Promise<{ revision: number; state: ChannelState }> {
  const found = await store.getChannelState(channel);
  if (!found) return { revision: 0, state: emptyState(channel) };
  return {
    revision: found.revision,
    state: parseChannelState(JSON.parse(decoder.decode(found.bytes)) as unknown, channel),
  };
}

function parseChannelState(value: unknown, channel: string): ChannelState {
  const v = (value ?? {}) as Record<string, unknown>;
  if (v.schema !== CHANNEL_STATE_SCHEMA)
    throw new HistoryError(`channel ${channel}: state is not ${CHANNEL_STATE_SCHEMA}`, 'internal');
  const tags = new Map<string, number>();
  if (v.tags !== null && typeof v.tags === 'object')
    for (const [name, version] of Object.entries(v.tags)) if (typeof version === 'number') tags.set(name, version);
  const pin = v.pin as Pin | undefined;
  const guard = v.guard as GuardPolicy | undefined;
  return {
    schema: CHANNEL_STATE_SCHEMA,
    channel,
    tags,
    ...(pin && typeof pin.version === 'number' ? { pin } : {}),
    ...(guard && typeof guard.maxShrinkPercent === 'number'
      ? { guard: { maxShrinkPercent: guard.maxShrinkPercent } }
      : {}),
  };
}

/**
 * Applies `change` to the newest state and writes it as the next revision; on a lost race
 * re-reads and re-applies (bounded). `change` returning undefined writes nothing.
 */
export async function updateChannelState(
  store: Pick<ChannelReader, 'getChannelState'> & Pick<ChannelWriter, 'putChannelState'>,
  channel: string,
  change: (state: ChannelState) => ChannelState | undefined,
): Promise<ChannelState> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const { revision, state } = await readChannelState(store, channel);
    const next = change(state);
    if (next === undefined) return state;
    const bytes = new TextEncoder().encode(
      `${JSON.stringify({ ...next, tags: Object.fromEntries(next.tags) }, null, 2)}\n`,
    );
    if ((await store.putChannelState(channel, revision + 1, bytes)) === 'created') return next;
  }
  throw new HistoryError(`channel ${channel}: state kept changing under us; try again`);
}

export function withoutPin(state: ChannelState): ChannelState {
  return {
    schema: state.schema,
    channel: state.channel,
    tags: state.tags,
    ...(state.guard ? { guard: state.guard } : {}),
  };
}

/**
 * S3 event notifications (the `Records` S3 sends to Lambda, event version 2.x): only the fields
 * the inputs handler reads, typed structurally so no @types/aws-lambda is needed.
 */
import { isValidChannel } from '../../src/snapshot/manifest.js';

export interface S3EventRecord {
  readonly eventSource?: string;
  readonly eventName?: string;
  readonly eventTime?: string;
  readonly userIdentity?: { readonly principalId?: string };
  readonly s3?: {
    readonly bucket?: { readonly name?: string };
    readonly object?: { readonly key?: string; readonly size?: number; readonly sequencer?: string };
  };
}

export interface S3Event {
  readonly Records?: readonly S3EventRecord[];
}

/** One channel to recompile, with the newest record that asked for it (for the audit's who/why). */
export interface ChannelTouch {
  readonly bucket: string;
  readonly channel: string;
  readonly key: string;
  readonly eventName: string;
  readonly principal: string;
}

export interface SkippedRecord {
  readonly key: string;
  readonly reason: string;
}

/**
 * S3 URL-encodes keys in events, with `+` for a space (form encoding): `inputs/main/my+file.yaml`
 * is the object `inputs/main/my file.yaml`.
 */
export const decodeEventKey = (key: string): string => decodeURIComponent(key.replace(/\+/g, ' '));

/**
 * The channels an event touches: keys `<prefix><channel>/<anything>`. Several records for one
 * channel (a batch upload) mean one compile: the handler reads the channel's whole inputs folder.
 */
export function channelsOf(event: S3Event, prefix: string): { touched: ChannelTouch[]; skipped: SkippedRecord[] } {
  const byChannel = new Map<string, ChannelTouch>();
  const skipped: SkippedRecord[] = [];
  for (const r of event.Records ?? []) {
    const rawKey = r.s3?.object?.key;
    const bucket = r.s3?.bucket?.name;
    if (r.eventSource !== 'aws:s3' || typeof rawKey !== 'string' || typeof bucket !== 'string') {
      skipped.push({ key: String(rawKey), reason: 'not an S3 object record' });
      continue;
    }
    const key = decodeEventKey(rawKey);
    if (!key.startsWith(prefix)) {
      skipped.push({ key, reason: `outside ${prefix}` });
      continue;
    }
    const rest = key.slice(prefix.length);
    const slash = rest.indexOf('/');
    const channel = slash > 0 ? rest.slice(0, slash) : '';
    if (!isValidChannel(channel) || slash === rest.length - 1) {
      skipped.push({ key, reason: `expected ${prefix}<channel>/<file>` });
      continue;
    }
    byChannel.set(`${bucket}\n${channel}`, {
      bucket,
      channel,
      key,
      eventName: r.eventName ?? 'unknown',
      principal: r.userIdentity?.principalId ?? 'unknown',
    });
  }
  return { touched: [...byChannel.values()], skipped };
}

/**
 * Tells relays that a new head was published, so they read it at once instead of at their next
 * poll. A notify is only a hint (POST /notify on a relay's HTTP port, no body): the store stays the
 * truth, a lost notify costs one poll interval, and nothing waits for the answers.
 *
 * Targets: `http://host:port` (one relay, or a Service that load-balances: only one of its relays
 * hears it) or `dns+http://name:port`, where every address the name resolves to is told: a
 * headless Service's name lists every relay pod.
 */
import { lookup } from 'node:dns/promises';

export type RelayLog = (level: 'debug' | 'warn', event: string, fields: Record<string, unknown>) => void;

export interface RelayNotifierOptions {
  /** Per request. Default 1000 ms. */
  readonly timeoutMs?: number;
  /** Resolves a `dns+` target's name to addresses (tests inject one). Default: the system resolver. */
  readonly resolve?: (host: string) => Promise<readonly string[]>;
  readonly log?: RelayLog;
}

export interface RelayNotifier {
  /** Sends the hint to every target; resolves when every request has ended (tests wait on it). */
  notify(channel: string): Promise<void>;
}

/** At most this many relays are told per target (a headless Service's A records). */
export const MAX_ADDRESSES_PER_TARGET = 256;

export class InvalidNotifyTargetError extends Error {
  override readonly name = 'InvalidNotifyTargetError';
}

interface Target {
  readonly url: URL;
  readonly dns: boolean;
}

/** Parses `http(s)://…` and `dns+http(s)://…` targets; throws InvalidNotifyTargetError on others. */
export function parseNotifyTarget(text: string): Target {
  const dns = text.startsWith('dns+');
  let url: URL;
  try {
    url = new URL(dns ? text.slice(4) : text);
  } catch {
    throw new InvalidNotifyTargetError(`--notify ${text}: not a URL (http://host:port or dns+http://name:port)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new InvalidNotifyTargetError(`--notify ${text}: use http(s):// or dns+http(s)://`);
  return { url, dns };
}

export function relayNotifier(targets: readonly string[], opts: RelayNotifierOptions = {}): RelayNotifier {
  const parsed = targets.map(parseNotifyTarget);
  const timeoutMs = opts.timeoutMs ?? 1000;
  const resolve = opts.resolve ?? (async (host) => (await lookup(host, { all: true })).map((a) => a.address));
  const log: RelayLog = opts.log ?? (() => undefined);
  const failing = new Set<string>(); // targets whose last notify failed: warn once, not per publish

  const post = async (target: string, url: URL): Promise<void> => {
    try {
      const res = await fetch(url, { method: 'POST', signal: AbortSignal.timeout(timeoutMs) });
      await res.body?.cancel();
      if (!res.ok && res.status !== 404) throw new Error(`HTTP ${res.status}`);
      if (failing.delete(target)) log('debug', 'watch.notify_recovered', { target });
    } catch (err) {
      if (!failing.has(target))
        log('warn', 'watch.notify_failed', {
          message: `relay notify to ${target} failed; that relay finds the new head at its next poll`,
          target,
          error: (err as Error).message,
        });
      failing.add(target);
    }
  };

  const urlsOf = async (t: Target, channel: string): Promise<URL[]> => {
    const at = (host?: string): URL => {
      const u = new URL('/notify', t.url);
      if (host !== undefined) u.hostname = host.includes(':') ? `[${host}]` : host;
      u.searchParams.set('channel', channel);
      return u;
    };
    if (!t.dns) return [at()];
    const addresses = await resolve(t.url.hostname);
    return [...new Set(addresses)].slice(0, MAX_ADDRESSES_PER_TARGET).map(at);
  };

  return {
    async notify(channel) {
      await Promise.all(
        parsed.map(async (t) => {
          const name = t.url.href;
          let urls: URL[];
          try {
            urls = await urlsOf(t, channel);
          } catch (err) {
            log('warn', 'watch.notify_failed', { target: name, error: (err as Error).message });
            return;
          }
          await Promise.all(urls.map((u) => post(`${u.host}`, u)));
        }),
      );
    },
  };
}

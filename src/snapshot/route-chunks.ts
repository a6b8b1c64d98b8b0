/**
 * Splits a large RouteConfiguration's encoding into the parts of a composite object (composite.ts):
 *
 *   [head (`name`)] ‖ chunk ‖ chunk ‖ … ‖ [tail (fields after `virtual_hosts`)]
 *
 * A chunk is a run of consecutive virtual hosts, each framed as the field-2 entry it is in the
 * RouteConfiguration (tag, length, bytes), so concatenating the parts gives exactly the encoding.
 *
 * Chunk boundaries depend only on virtual host names: a chunk ends after a virtual host whose
 * name hashes to 0 modulo CHUNK_SPREAD (or after MAX_CHUNK hosts). A service's virtual host has
 * the same name in every client namespace's config, so the namespaces' configs are cut at the same
 * places, and a chunk differs between two namespaces only where one of its virtual hosts does (the
 * few services of the client's own namespace, whose short names are domains there). Everything
 * else is the same chunk, stored once. Being a function of the content alone, the parts (and so
 * the digest) do not depend on which message objects the compiler happened to share.
 *
 * Chunks are cached per run of virtual host objects (by identity), so a run shared by every
 * namespace's config is framed and hashed once per compile.
 */
import { LRUCache } from 'lru-cache';
import type { RouteConfiguration, VirtualHost } from '../xds/proto.js';
import { encodeVirtualHost, routeConfigurationEnds, spliceVirtualHosts } from '../xds/route-config-encoder.js';
import { fnv1a32 } from './tree.js';
import { digestOf, type Hasher } from './digest.js';

/** Average virtual hosts per chunk. */
export const CHUNK_SPREAD = 8;
/** At most this many virtual hosts per chunk. */
export const MAX_CHUNK = 64;
/**
 * Chunks cached per first virtual host. A run usually has two variants: the one most namespaces
 * share and the one of the namespace owning a service in it.
 */
const MAX_VARIANTS = 4;
/** Distinct heads and tails kept (one per config name, one per set of trailing fields). */
const MAX_ENDS = 1024;

export interface Part {
  readonly digest: string;
  readonly bytes: Uint8Array;
}

interface Chunk extends Part {
  readonly vhosts: readonly VirtualHost[];
  /** Whether the chunk ended by the boundary rule (not because its config ended there). */
  readonly closed: boolean;
}

const EMPTY = new Uint8Array(0);

const endsAfter = (vh: VirtualHost, length: number): boolean =>
  length >= MAX_CHUNK || fnv1a32(vh.name ?? '') % CHUNK_SPREAD === 0;

export class RouteChunker {
  /** First virtual host of a run → the chunks starting with it. */
  private readonly chunks = new WeakMap<VirtualHost, Chunk[]>();
  /** Heads and tails: few per compile, but a long-lived encoder (the watcher's) sees namespaces come and go. */
  private readonly ends = new LRUCache<string, Part>({ max: MAX_ENDS });

  constructor(private readonly hasher: Hasher) {}

  /** The parts of `rc`, in order; their bytes concatenated are the RouteConfiguration's encoding. */
  parts(rc: RouteConfiguration): Part[] {
    const { head, tail } = routeConfigurationEnds(rc);
    const out: Part[] = [];
    if (head.length) out.push(this.end(head));
    const vhosts = rc.virtual_hosts ?? [];
    for (let start = 0; start < vhosts.length;) {
      const c = this.cached(vhosts, start) ?? this.chunk(vhosts, start);
      out.push(c);
      start += c.vhosts.length;
    }
    if (tail.length) out.push(this.end(tail));
    return out;
  }

  private end(bytes: Uint8Array): Part {
    const key = bytes.join(',');
    let part = this.ends.get(key);
    if (!part) this.ends.set(key, (part = { digest: digestOf(bytes, this.hasher), bytes }));
    return part;
  }

  /**
   * A chunk built earlier from the same virtual host objects at `start`: the same names, so the
   * same boundary (the rule looks at nothing after the chunk), unless it ended with its config.
   */
  private cached(vhosts: readonly VirtualHost[], start: number): Chunk | undefined {
    const list = this.chunks.get(vhosts[start] as VirtualHost);
    if (!list) return undefined;
    search: for (let i = 0; i < list.length; i++) {
      const c = list[i] as Chunk;
      const run = c.vhosts;
      const n = run.length;
      if (start + n > vhosts.length || (!c.closed && start + n !== vhosts.length)) continue;
      for (let k = 1; k < n; k++) if (run[k] !== vhosts[start + k]) continue search;
      // Least recently used first: the variant most namespaces share is not evicted by rarer ones.
      if (i !== list.length - 1) {
        list.splice(i, 1);
        list.push(c);
      }
      return c;
    }
    return undefined;
  }

  private chunk(vhosts: readonly VirtualHost[], start: number): Chunk {
    let to = start;
    let closed = false;
    while (to < vhosts.length) {
      to++;
      if (endsAfter(vhosts[to - 1] as VirtualHost, to - start)) {
        closed = true;
        break;
      }
    }
    const run = vhosts.slice(start, to);
    const bytes = spliceVirtualHosts(EMPTY, run.map(encodeVirtualHost), EMPTY);
    const chunk: Chunk = { digest: digestOf(bytes, this.hasher), bytes, vhosts: run, closed };
    const first = vhosts[start] as VirtualHost;
    const list = this.chunks.get(first);
    if (!list) this.chunks.set(first, [chunk]);
    else {
      // Bounded: a long-lived encoder (the watcher's) must not keep every past variant alive. A
      // per-key LRUCache would cost ~2 KB per first virtual host; this list is the same policy.
      if (list.length >= MAX_VARIANTS) list.shift();
      list.push(chunk);
    }
    return chunk;
  }
}

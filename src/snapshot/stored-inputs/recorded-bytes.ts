/**
 * The canonical bytes of a recorded object's stored form, written straight from the reads its
 * validator made (src/inputs/retain.ts `Retention.reads`): the bytes
 * `canonicalJsonBytes(canonicalForm(projection))` gives (canonical-object.ts), without the
 * projection and the canonical copy in between — keys sorted as they are written, metadata
 * reduced to name, namespace, labels (and creationTimestamp for the age-ordered kinds), a Pod's status to what its compile reads. This runs for
 * the bulk of a mesh (Pods, Services, EndpointSlices, …): a test compares it with the projection
 * path on every golden case, the fixtures and the synthetic mesh.
 *
 * Undefined where the projection path decides differently (an object reached twice, a frozen or
 * sealed object, a sparse list, a Gateway API object): the caller projects then. Pure.
 */
import { ByteWriter } from '../../canonical-json.js';
import type { RecordedReads } from '../../inputs/read-recorder.js';
import type { ByteSlab } from '../../xds/wire/slab.js';
import { isAgeOrdered } from './age-ordered.js';
import { isRecord, own, type Raw } from './raw.js';

const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_LIST = 0x5b;
const CLOSE_LIST = 0x5d;

const NO_READS: RecordedReads = { keysRead: (_o, _out, at) => at, readWhole: () => false };

/** Thrown (and caught below) where the projection path must decide. */
class NotWritable extends Error {}

/**
 * Writes one object's stored form. Members the stored form leaves out (annotations, a Pod's other
 * conditions) are still walked, their output taken back, so an object they share with a kept member
 * is caught as the projection path catches it.
 */
class RecordedWriter {
  /** Keys of the objects being written, one segment per level, up to `top` (no array per object). */
  private readonly keys: string[] = [];
  private top = 0;
  /** Containers reached so far, up to `reached` (a few per object: a scan beats a set). */
  private readonly seen: object[] = [];
  private reached = 0;
  private reads: RecordedReads = NO_READS;

  constructor(readonly w: ByteWriter) {}

  /** Ready for one object (undefined: done, nothing kept). */
  start(reads: RecordedReads | undefined): void {
    this.reads = reads ?? NO_READS;
    this.top = 0;
    this.reached = 0;
    this.w.pos = 0;
    if (reads === undefined) this.seen.length = 0;
  }

  /** The root: its read members, metadata and status in their canonical forms; `aged`: it keeps its creationTimestamp. */
  root(raw: Raw, kind: string, aged: boolean): void {
    this.enter(raw);
    const base = this.sortedKeysOf(raw);
    const end = this.top;
    let first = true;
    this.w.byte(OPEN_OBJECT);
    for (let i = base; i < end; i++) {
      const k = this.keys[i] as string;
      const v = raw[k];
      if (k === 'status') {
        if (kind === 'Pod' && isRecord(v)) first = this.podStatus(v, first);
        else this.walked(v);
      } else if (k === 'metadata' && isRecord(v)) {
        first = this.key(k, first);
        this.metadata(v, aged);
      } else first = this.member(k, v, first);
    }
    this.w.byte(CLOSE_OBJECT);
    this.top = base;
  }

  /** canonical-object.ts canonicalMeta (not a Gateway API object) of the projection, annotations dropped (retain.ts). */
  private metadata(meta: Raw, aged: boolean): void {
    this.enter(meta);
    const base = this.sortedKeysOf(meta);
    const end = this.top;
    let first = true;
    this.w.byte(OPEN_OBJECT);
    for (let i = base; i < end; i++) {
      const k = this.keys[i] as string;
      const v = meta[k];
      if ((k === 'name' || k === 'namespace') && typeof v === 'string' && v !== '') first = this.member(k, v, first);
      else if (k === 'creationTimestamp' && aged && typeof v === 'string' && v !== '') first = this.member(k, v, first);
      else if (k === 'labels' && isRecord(v) && this.readCount(v) > 0) first = this.member(k, v, first);
      else this.walked(v);
    }
    this.w.byte(CLOSE_OBJECT);
    this.top = base;
  }

  /** canonical-object.ts podStatus of the projection: phase, podIP, podIPs (their ip), the Ready conditions; nothing (its text taken back) when empty. */
  private podStatus(status: Raw, first: boolean): boolean {
    const w = this.w;
    const start = w.pos;
    this.enter(status);
    const base = this.sortedKeysOf(status);
    const end = this.top;
    const next = this.key('status', first);
    w.byte(OPEN_OBJECT);
    let inner = true;
    for (let i = base; i < end; i++) {
      const k = this.keys[i] as string;
      const v = status[k];
      if (k === 'phase' || k === 'podIP') inner = this.member(k, v, inner);
      else if (k === 'podIPs' && Array.isArray(v)) {
        inner = this.key(k, inner);
        this.list(v, IP_ONLY);
      } else if (k === 'conditions' && Array.isArray(v)) inner = this.readyConditions(v, inner);
      else this.walked(v);
    }
    w.byte(CLOSE_OBJECT);
    this.top = base;
    if (!inner) return next;
    w.pos = start;
    return first;
  }

  /** A podIPs element: an object becomes `{ip}`, anything else as projected. */
  private ipOnly(item: unknown): void {
    if (!isRecord(item)) return this.value(item);
    this.enter(item);
    const base = this.top;
    const end = this.reads.keysRead(item, this.keys, base);
    this.top = end;
    let ip: unknown;
    for (let i = base; i < end; i++) {
      const k = this.keys[i] as string;
      if (k === 'ip') ip = item[k];
      else this.walked(item[k]);
    }
    this.top = base;
    this.w.byte(OPEN_OBJECT);
    this.member('ip', ip, true);
    this.w.byte(CLOSE_OBJECT);
  }

  /** `"conditions":[{status,type:"Ready"},…]` of the Ready ones, or nothing (its text taken back) when there are none. */
  private readyConditions(list: readonly unknown[], first: boolean): boolean {
    const w = this.w;
    const start = w.pos;
    const next = this.key('conditions', first);
    this.enter(list);
    const whole = this.reads.readWhole(list);
    w.byte(OPEN_LIST);
    let count = 0;
    for (let i = 0; i < list.length; i++) {
      if (!(i in list)) throw new NotWritable();
      const c: unknown = list[i];
      const read = whole || this.hasRead(list, i);
      if (!read || !isRecord(c)) {
        if (read) this.walked(c);
        continue;
      }
      this.enter(c);
      const base = this.top;
      const end = this.reads.keysRead(c, this.keys, base);
      this.top = end;
      let typeRead = false;
      let status: unknown;
      for (let j = base; j < end; j++) {
        const k = this.keys[j] as string;
        if (k === 'type') typeRead = true;
        else if (k === 'status') status = c[k];
        else this.walked(c[k]);
      }
      this.top = base;
      if (!typeRead || c.type !== 'Ready') {
        this.walked(status);
        continue;
      }
      if (count++ > 0) w.byte(COMMA);
      w.byte(OPEN_OBJECT);
      this.member('type', 'Ready', this.member('status', status, true));
      w.byte(CLOSE_OBJECT);
    }
    w.byte(CLOSE_LIST);
    if (count > 0) return next;
    w.pos = start;
    return first;
  }

  /** Writes `,"k":` or `"k":`; false (the next member needs a comma). */
  private key(k: string, first: boolean): boolean {
    const w = this.w;
    if (!first) w.byte(COMMA);
    const bytes = quotedKey(k);
    if (bytes === undefined) {
      w.string(k);
      w.byte(COLON);
    } else w.bytes(bytes);
    return false;
  }

  /** A member as projected, left out when JSON has no text for it; returns the new `first`. */
  private member(k: string, v: unknown, first: boolean): boolean {
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') return first;
    const next = this.key(k, first);
    this.value(v);
    return next;
  }

  /** The projection of a value: a container by its reads, anything else as it is. */
  private value(v: unknown): void {
    if (v === null || typeof v !== 'object') {
      if (!this.w.value(v)) this.w.ascii('null');
    } else if (Array.isArray(v)) this.list(v, AS_PROJECTED);
    else this.object(v as Raw);
  }

  private object(o: Raw): void {
    this.enter(o);
    const base = this.sortedKeysOf(o);
    const end = this.top;
    let first = true;
    this.w.byte(OPEN_OBJECT);
    for (let i = base; i < end; i++) {
      const k = this.keys[i] as string;
      first = this.member(k, o[k], first);
    }
    this.w.byte(CLOSE_OBJECT);
    this.top = base;
  }

  /** A list keeps its length: an element never read is null. */
  private list(list: readonly unknown[], items: typeof AS_PROJECTED | typeof IP_ONLY): void {
    this.enter(list);
    const whole = this.reads.readWhole(list);
    this.w.byte(OPEN_LIST);
    for (let i = 0; i < list.length; i++) {
      if (!(i in list)) throw new NotWritable();
      if (i > 0) this.w.byte(COMMA);
      const v: unknown = list[i];
      if ((whole || this.hasRead(list, i)) && v !== undefined) {
        if (items === IP_ONLY) this.ipOnly(v);
        else this.value(v);
      } else this.w.ascii('null');
    }
    this.w.byte(CLOSE_LIST);
  }

  /** Walks a value the stored form leaves out (its containers count as reached), writing nothing. */
  private walked(v: unknown): void {
    if (v === null || typeof v !== 'object') return;
    const at = this.w.pos;
    this.value(v);
    this.w.pos = at;
  }

  /** A container reached: once, and extensible (a frozen one's members are kept whole by the projection path). */
  private enter(o: object): void {
    if (!Object.isExtensible(o)) throw new NotWritable();
    const seen = this.seen;
    const n = this.reached;
    if (n > MAX_SCANNED) throw new NotWritable();
    for (let i = 0; i < n; i++) if (seen[i] === o) throw new NotWritable();
    seen[n] = o;
    this.reached = n + 1;
  }

  private hasRead(list: readonly unknown[], i: number): boolean {
    const end = this.reads.keysRead(list, this.keys, this.top);
    const key = String(i);
    for (let j = this.top; j < end; j++) if (this.keys[j] === key) return true;
    return false;
  }

  /** Members of `o` read with a value (undefined ones are left out by the projection). */
  private readCount(o: Raw): number {
    const end = this.reads.keysRead(o, this.keys, this.top);
    let n = 0;
    for (let j = this.top; j < end; j++) if (o[this.keys[j] as string] !== undefined) n++;
    return n;
  }

  /** Pushes the keys read of `o`, sorted by UTF-16 code units; returns where they start. */
  private sortedKeysOf(o: object): number {
    const base = this.top;
    const keys = this.keys;
    const end = this.reads.keysRead(o, keys, base);
    for (let i = base + 1; i < end; i++) {
      const k = keys[i] as string;
      let j = i - 1;
      while (j >= base && (keys[j] as string) > k) {
        keys[j + 1] = keys[j] as string;
        j--;
      }
      keys[j + 1] = k;
    }
    this.top = end;
    return base;
  }
}

const AS_PROJECTED = 0;
const IP_ONLY = 1;
/** Containers of one object checked by a scan; an object with more is left to the projection path. */
const MAX_SCANNED = 4096;

/**
 * `"key":` as UTF-8, for keys of printable ASCII: keys repeat from object to object (`metadata`,
 * `name`, `ports`…). Capped, so keys from user data (labels) cannot grow it without bound.
 */
const KEY_CACHE_MAX = 4096;
const quotedKeys = new Map<string, Uint8Array | null>();

function quotedKey(k: string): Uint8Array | undefined {
  let q = quotedKeys.get(k);
  if (q === undefined) {
    q = null;
    const text = JSON.stringify(k) + ':';
    if (text.length === k.length + 3 && /^[\x20-\x7e]*$/.test(k)) q = new TextEncoder().encode(text);
    if (quotedKeys.size < KEY_CACHE_MAX) quotedKeys.set(k, q);
  }
  return q ?? undefined;
}

const INITIAL_BUFFER = 1 << 16;
const MAX_KEPT_BUFFER = 1 << 20;
const shared = new RecordedWriter(new ByteWriter(new Uint8Array(INITIAL_BUFFER)));
let writing = false;

/** Where `recordedCanonicalBytes` leaves the bytes it writes: a view of its own buffer, valid until its next call. */
export const SHARED_BYTES = 'shared';

/**
 * The canonical bytes of the stored form of `raw` from its recorded reads, or undefined when the
 * projection path must decide. Written into `into` when it is a slab (bytes that live as long as
 * the others); with SHARED_BYTES, a view of the writer's buffer (for a caller that copies them at
 * once: the spool); else a copy of their own.
 */
export function recordedCanonicalBytes(
  raw: Raw,
  reads: RecordedReads,
  into?: ByteSlab | typeof SHARED_BYTES,
): Uint8Array | undefined {
  const kind = own(raw, 'kind');
  const apiVersion = own(raw, 'apiVersion');
  if (typeof kind !== 'string' || kind === 'WorkloadEntry') return undefined;
  if (typeof apiVersion === 'string' && apiVersion.startsWith('gateway.networking.k8s.io/')) return undefined;
  // Re-entered only from a getter in `raw`: such a call gets a writer of its own.
  const aged = isAgeOrdered(kind, apiVersion);
  const writer = writing ? new RecordedWriter(new ByteWriter(new Uint8Array(256))) : shared;
  writing = true;
  writer.start(reads);
  try {
    if (into !== undefined && into !== SHARED_BYTES && writer === shared)
      return into.write(writer.w, () => writer.root(raw, kind, aged));
    writer.root(raw, kind, aged);
    // A view of the shared buffer stays valid when the buffer is replaced below (it keeps the old one).
    if (into === SHARED_BYTES && writer === shared) return writer.w.buf.subarray(0, writer.w.pos);
    return writer.w.buf.slice(0, writer.w.pos);
  } catch (e) {
    if (e instanceof NotWritable) return undefined;
    throw e;
  } finally {
    writer.start(undefined);
    if (writer === shared) {
      writing = false;
      if (shared.w.buf.length > MAX_KEPT_BUFFER) shared.w.buf = new Uint8Array(INITIAL_BUFFER);
    }
  }
}

/**
 * Encodes resource messages to protobuf bytes, once per message object.
 *
 * The compiler reuses message objects (a group shared by many classes, or an unchanged resource
 * kept by an incremental compile), so a WeakMap from the object to its bytes and digest saves the
 * encoding and hashing work. Messages must not be mutated after they were encoded.
 */
import { encodeMessage, type RouteConfiguration } from '../xds/proto.js';
import { routeConfigurationParts, writeRouteConfiguration } from '../xds/route-config-encoder.js';
import { XDS_TYPE_NAME, type XdsType } from '../xds/type-urls.js';
import { compositeBytes, concatParts } from './composite.js';
import { digestOf, nobleSha256Hex, type Hasher } from './digest.js';
import { RouteChunker, type Part } from './route-chunks.js';

export interface EncodedResource {
  readonly type: XdsType;
  /** The stored object's bytes: the protobuf encoding, or for a composite (`parts` set) the composite object (composite.ts). */
  readonly bytes: Uint8Array;
  readonly digest: string;
  /** A composite's parts, in order (plain objects; the same part may appear twice). */
  readonly parts?: readonly Part[];
}

/**
 * Route configs at least this large are stored as composites of shared parts (route-chunks.ts): a
 * sidecar config holds every service of the port, so per-namespace copies would be services ×
 * namespaces bytes to hash and store, almost all of them the same in every namespace.
 */
export const COMPOSITE_ROUTES_MIN_BYTES = 64 * 1024;
const FEW_VIRTUAL_HOSTS = 16;

/** The protobuf bytes of an encoded resource (a composite's parts concatenated). */
export const protobufBytes = (e: EncodedResource): Uint8Array => (e.parts ? concatParts(e.parts.map((p) => p.bytes)) : e.bytes);

export class ResourceEncoder {
  private readonly cache = new WeakMap<object, EncodedResource>();
  private readonly chunker: RouteChunker;
  /** How many messages were actually encoded (cache misses). */
  encodes = 0;

  constructor(readonly hasher: Hasher = nobleSha256Hex) {
    this.chunker = new RouteChunker(hasher);
  }

  encode(type: XdsType, message: object): EncodedResource {
    const hit = this.cache.get(message);
    if (hit && hit.type === type) return hit;
    // Route configs of different client namespaces share most virtual host objects: the route
    // config encoder encodes each virtual host once and splices the bytes (identical output).
    const encoded = type === 'routes' ? this.encodeRoutes(message as RouteConfiguration) : this.encoded(type, encodeMessage(XDS_TYPE_NAME[type], message));
    this.encodes++;
    this.cache.set(message, encoded);
    return encoded;
  }

  private encoded(type: XdsType, bytes: Uint8Array): EncodedResource {
    return { type, bytes, digest: digestOf(bytes, this.hasher) };
  }

  private encodeRoutes(rc: RouteConfiguration): EncodedResource {
    // Few virtual hosts (e.g. a proxyless config: one): never large enough, not worth chunking.
    if ((rc.virtual_hosts?.length ?? 0) < FEW_VIRTUAL_HOSTS) return this.encoded('routes', writeRouteConfiguration(routeConfigurationParts(rc)));
    const parts = this.chunker.parts(rc);
    let size = 0;
    for (const p of parts) size += p.bytes.length;
    if (size < COMPOSITE_ROUTES_MIN_BYTES) return this.encoded('routes', concatParts(parts.map((p) => p.bytes)));
    const bytes = compositeBytes(parts.map((p) => p.digest));
    return { type: 'routes', bytes, digest: digestOf(bytes, this.hasher), parts };
  }
}

/** Objects by digest (stored bytes) from their encodings. */
export class EncodedObjects implements ReadonlyMap<string, Uint8Array> {
  constructor(private readonly sources: ReadonlyMap<string, { readonly bytes: Uint8Array }>) {}

  get size(): number {
    return this.sources.size;
  }

  has(digest: string): boolean {
    return this.sources.has(digest);
  }

  get(digest: string): Uint8Array | undefined {
    return this.sources.get(digest)?.bytes;
  }

  keys(): MapIterator<string> {
    return this.sources.keys();
  }

  *values(): MapIterator<Uint8Array> {
    for (const s of this.sources.values()) yield s.bytes;
  }

  *entries(): MapIterator<[string, Uint8Array]> {
    for (const [d, s] of this.sources) yield [d, s.bytes];
  }

  [Symbol.iterator](): MapIterator<[string, Uint8Array]> {
    return this.entries();
  }

  forEach(fn: (value: Uint8Array, key: string, map: ReadonlyMap<string, Uint8Array>) => void, thisArg?: unknown): void {
    for (const [d, s] of this.sources) fn.call(thisArg, s.bytes, d, this);
  }
}

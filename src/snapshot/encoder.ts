/**
 * Encodes resource messages to protobuf bytes, once per message object.
 *
 * The compiler reuses message objects (a group shared by many classes, or an unchanged resource
 * kept by an incremental compile), so a WeakMap from the object to its bytes and digest saves the
 * encoding and hashing work. Messages must not be mutated after they were encoded.
 */
import { encodeMessage, type RouteConfiguration } from '../xds/proto.js';
import { routeConfigurationParts, writeRouteConfiguration, type RouteConfigurationParts } from '../xds/route-config-encoder.js';
import { XDS_TYPE_NAME, type XdsType } from '../xds/type-urls.js';
import { digestOf, nobleSha256Hex, type Hasher } from './digest.js';

export interface EncodedResource {
  readonly type: XdsType;
  /** The protobuf bytes. For a large route config, spliced anew on every read: keep what you need, not the resource. */
  readonly bytes: Uint8Array;
  readonly digest: string;
}

/**
 * Route configs at least this large keep their parts (virtual host bytes shared with the other
 * namespaces' configs), not their own spliced bytes: a sidecar config holds every service of the
 * port, so per-namespace copies would be services × namespaces bytes held for the whole build.
 */
export const SPLICED_ROUTES_MIN_BYTES = 64 * 1024;

/** A large route config: digest computed once, bytes spliced from shared parts when read. */
class SplicedRouteConfig implements EncodedResource {
  readonly type = 'routes' as const;
  constructor(
    private readonly parts: RouteConfigurationParts,
    readonly digest: string,
  ) {}

  get bytes(): Uint8Array {
    return writeRouteConfiguration(this.parts);
  }
}

export class ResourceEncoder {
  private readonly cache = new WeakMap<object, EncodedResource>();
  /** Reused for hashing large route configs (never handed out). */
  private scratch = new Uint8Array(0);
  /** How many messages were actually encoded (cache misses). */
  encodes = 0;

  constructor(readonly hasher: Hasher = nobleSha256Hex) {}

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
    const parts = routeConfigurationParts(rc);
    if (parts.size < SPLICED_ROUTES_MIN_BYTES) return this.encoded('routes', writeRouteConfiguration(parts));
    if (this.scratch.length < parts.size) this.scratch = new Uint8Array(Math.max(parts.size, this.scratch.length * 2));
    return new SplicedRouteConfig(parts, digestOf(writeRouteConfiguration(parts, this.scratch), this.hasher));
  }
}

/** Objects by digest whose bytes are read from their encodings when asked for (large route configs are spliced then). */
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

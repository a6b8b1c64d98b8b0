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
import type { ByteSlab } from '../xds/wire/slab.js';
import { VIEW } from '../xds/wire/writer.js';
import { compositeOfRawDigests, concatParts, rawDigest } from './composite.js';
import { digestOf, nobleSha256Hex, type Hasher } from './digest.js';
import { RouteChunker, type Part } from './route-chunks.js';

export interface EncodedResource {
  readonly type: XdsType;
  /**
   * The stored object's bytes: the protobuf encoding, or for a composite (`parts` set) the composite
   * object (composite.ts). From a transient encoder (EncoderOptions), valid until its next `encode`.
   */
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
/** Route configs with fewer virtual hosts are stored whole, whatever their size: there is nothing for namespaces to share. */
export const COMPOSITE_ROUTES_MIN_VHOSTS = 16;

export interface EncoderOptions {
  /**
   * Remember each message object's encoding (default true). A one-shot build (build/one-shot.ts)
   * encodes each message once and lets it go: a cache would only keep wrappers alive meanwhile.
   */
  readonly cache?: boolean;
  /**
   * Carve the bytes out of shared buffers (xds/wire/slab.ts) rather than one buffer per object: for
   * a build whose objects all live until it hands them on (the one-shot build), never for an
   * encoder whose bytes outlive a build one by one.
   */
  readonly slab?: ByteSlab;
  /**
   * Hand out the bytes of a message encoded whole as a view of the wire writer's buffer, valid
   * until the next `encode` (no cache then): for a caller that copies them away at once (a one-shot
   * build whose objects go to a spool), so they are not first copied into a slab. Composites and
   * their parts keep bytes of their own.
   */
  readonly transient?: boolean;
}

export class ResourceEncoder {
  private readonly cache: WeakMap<object, EncodedResource> | undefined;
  private readonly chunker: RouteChunker;
  /** Where encoded messages' bytes go (EncoderOptions.slab, .transient): undefined, a buffer of their own. */
  private into: ByteSlab | typeof VIEW | undefined;
  /**
   * The raw digest of each part (composite.ts): the chunker hands the same part objects to every
   * namespace's route config, so each is parsed from hex once, not once per config.
   */
  private readonly rawDigests = new WeakMap<Part, Uint8Array>();
  /** How many messages were actually encoded (cache misses). */
  encodes = 0;

  constructor(
    readonly hasher: Hasher = nobleSha256Hex,
    opts: EncoderOptions = {},
  ) {
    this.chunker = new RouteChunker(hasher);
    this.cache = opts.cache === false || opts.transient ? undefined : new WeakMap();
    this.into = opts.transient ? VIEW : opts.slab;
  }

  encode(type: XdsType, message: object): EncodedResource {
    const hit = this.cache?.get(message);
    if (hit && hit.type === type) return hit;
    // Route configs of different client namespaces share most virtual host objects: the route
    // config encoder encodes each virtual host once and splices the bytes (identical output).
    const encoded =
      type === 'routes'
        ? this.encodeRoutes(message as RouteConfiguration)
        : this.encoded(type, encodeMessage(XDS_TYPE_NAME[type], message, this.into));
    this.encodes++;
    this.cache?.set(message, encoded);
    return encoded;
  }

  /**
   * Runs `encodeAll` with this encoder handing out the bytes of a message encoded whole as views
   * (EncoderOptions.transient), for a caller that copies each encoding away before the next: the
   * SnapshotBuilder's full build into a spool, which copies ~110k objects (~145 MB at 10k services)
   * there and keeps none. An encoder that caches its encodings or writes into a slab runs it as it is.
   */
  viewsDuring<T>(encodeAll: () => T): T {
    if (this.cache || this.into !== undefined) return encodeAll();
    this.into = VIEW;
    try {
      return encodeAll();
    } finally {
      this.into = undefined;
    }
  }

  private encoded(type: XdsType, bytes: Uint8Array): EncodedResource {
    return { type, bytes, digest: digestOf(bytes, this.hasher) };
  }

  private encodeRoutes(rc: RouteConfiguration): EncodedResource {
    // A proxyless config has one virtual host: not chunked (cheap path, and nothing to share). Its
    // virtual host is its own, so a one-shot build writes it whole (into its slab, or a view); a
    // long-lived encoder splices each virtual host's kept bytes (an incremental compile reuses the objects).
    if ((rc.virtual_hosts?.length ?? 0) < COMPOSITE_ROUTES_MIN_VHOSTS)
      return this.encoded(
        'routes',
        this.into
          ? encodeMessage(XDS_TYPE_NAME.routes, rc, this.into)
          : writeRouteConfiguration(routeConfigurationParts(rc)),
      );
    const parts = this.chunker.parts(rc);
    let size = 0;
    for (const p of parts) size += p.bytes.length;
    if (size < COMPOSITE_ROUTES_MIN_BYTES) return this.encoded('routes', concatParts(parts.map((p) => p.bytes)));
    const bytes = compositeOfRawDigests(parts.map((p) => this.rawDigestOf(p)));
    return { type: 'routes', bytes, digest: digestOf(bytes, this.hasher), parts };
  }

  private rawDigestOf(part: Part): Uint8Array {
    let raw = this.rawDigests.get(part);
    if (!raw) this.rawDigests.set(part, (raw = rawDigest(part.digest)));
    return raw;
  }
}

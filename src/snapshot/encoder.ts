/**
 * Encodes resource messages to protobuf bytes, once per message object.
 *
 * The compiler reuses message objects (a group shared by many classes, or an unchanged resource
 * kept by an incremental compile), so a WeakMap from the object to its bytes and digest saves the
 * encoding and hashing work. Messages must not be mutated after they were encoded.
 */
import { encodeMessage, type RouteConfiguration } from '../xds/proto.js';
import { encodeRouteConfiguration } from '../xds/route-config-encoder.js';
import { XDS_TYPE_NAME, type XdsType } from '../xds/type-urls.js';
import { digestOf, nobleSha256Hex, type Hasher } from './digest.js';

export interface EncodedResource {
  readonly type: XdsType;
  readonly bytes: Uint8Array;
  readonly digest: string;
}

export class ResourceEncoder {
  private readonly cache = new WeakMap<object, EncodedResource>();
  /** How many messages were actually encoded (cache misses). */
  encodes = 0;

  constructor(readonly hasher: Hasher = nobleSha256Hex) {}

  encode(type: XdsType, message: object): EncodedResource {
    const hit = this.cache.get(message);
    if (hit && hit.type === type) return hit;
    // Route configs of different client namespaces share most virtual host objects: the route
    // config encoder encodes each virtual host once and splices the bytes (identical output).
    const bytes = type === 'routes' ? encodeRouteConfiguration(message as RouteConfiguration) : encodeMessage(XDS_TYPE_NAME[type], message);
    const encoded: EncodedResource = { type, bytes, digest: digestOf(bytes, this.hasher) };
    this.encodes++;
    this.cache.set(message, encoded);
    return encoded;
  }
}

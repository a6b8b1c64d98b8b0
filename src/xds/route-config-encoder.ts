/**
 * RouteConfiguration encoding that encodes each VirtualHost object once.
 *
 * Sidecar route configs are per client namespace (`routes/<ns>`), but the virtual hosts of services
 * outside the client's namespace are the same JS objects in every namespace's config
 * (src/compile/routes.ts). Encoding a config the ordinary way re-encodes all of them, namespaces ×
 * services times. Here each VirtualHost's bytes are kept (WeakMap: object → bytes) and spliced:
 *
 *   encode(fields before virtual_hosts) + per VH: tag (field 2, wire type 2) + varint length + bytes
 *   + encode(fields after virtual_hosts)
 *
 * protobufjs writes fields in .proto declaration order, which for RouteConfiguration is field
 * number order: `name` (1), `virtual_hosts` (2), then 3…17 (see RouteConfiguration.encode in
 * gen/envoy.js). So the result is exactly `encodeMessage(TypeName.RouteConfiguration, rc)`.
 *
 * Messages are immutable once built (the compiler never mutates a virtual host after handing it
 * out), so cached bytes stay valid for as long as the object lives.
 */
import { encodeMessage, type RouteConfiguration, type VirtualHost } from './proto.js';
import { TypeName } from './type-urls.js';

const VIRTUAL_HOST = 'envoy.config.route.v3.VirtualHost';

/** Field 2 (`virtual_hosts`), wire type 2 (length-delimited). */
export const VIRTUAL_HOSTS_TAG = (2 << 3) | 2;

const vhBytes = new WeakMap<VirtualHost, Uint8Array>();

/** How many VirtualHosts were actually encoded (cache misses); for tests and benchmarks. */
export const routeConfigEncoderStats = { virtualHostEncodes: 0 };

/** The encoding of one VirtualHost (cached per object). */
export function encodeVirtualHost(vh: VirtualHost): Uint8Array {
  let bytes = vhBytes.get(vh);
  if (!bytes) {
    bytes = encodeMessage(VIRTUAL_HOST, vh);
    vhBytes.set(vh, bytes);
    routeConfigEncoderStats.virtualHostEncodes++;
  }
  return bytes;
}

/**
 * `head ‖ each virtual host as a virtual_hosts entry (tag, length, bytes) ‖ tail`, in an exactly
 * sized array of its own (no shared pool slab is pinned by a kept encoding): the size is summed
 * first, so each byte is copied once.
 */
export function spliceVirtualHosts(head: Uint8Array, vhosts: readonly Uint8Array[], tail: Uint8Array): Uint8Array {
  let size = head.length + tail.length;
  for (const bytes of vhosts) size += 1 + varintSize(bytes.length) + bytes.length;
  const out = new Uint8Array(size);
  out.set(head);
  let pos = head.length;
  for (const bytes of vhosts) {
    out[pos++] = VIRTUAL_HOSTS_TAG;
    let len = bytes.length;
    while (len > 127) {
      out[pos++] = (len & 127) | 128;
      len >>>= 7;
    }
    out[pos++] = len;
    out.set(bytes, pos);
    pos += bytes.length;
  }
  out.set(tail, pos);
  return out;
}

function varintSize(v: number): number {
  return v < 1 << 7 ? 1 : v < 1 << 14 ? 2 : v < 1 << 21 ? 3 : v < 1 << 28 ? 4 : 5;
}

const EMPTY = new Uint8Array(0);

/**
 * A RouteConfiguration's encoding as the pieces it is spliced from: the fields before and after
 * `virtual_hosts`, and each virtual host's (shared, cached) bytes. Holding the parts instead of the
 * spliced bytes costs a pointer per virtual host, not its bytes again: the per-namespace sidecar
 * configs of a large mesh are services × namespaces bytes in all, almost all of it shared.
 */
export interface RouteConfigurationParts {
  readonly head: Uint8Array;
  readonly vhosts: readonly Uint8Array[];
  readonly tail: Uint8Array;
}

/** The encodings of the fields before `virtual_hosts` (`name`) and after it; either may be empty. */
export function routeConfigurationEnds(rc: RouteConfiguration): {
  readonly head: Uint8Array;
  readonly tail: Uint8Array;
} {
  // Everything but the virtual hosts goes through the generated codec, split around field 2.
  const { name, virtual_hosts: _vhosts, ...after } = rc;
  const head =
    name != null && Object.prototype.hasOwnProperty.call(rc, 'name') && name !== ''
      ? encodeMessage(TypeName.RouteConfiguration, { name })
      : EMPTY;
  const tail = encodeMessage(TypeName.RouteConfiguration, after);
  return { head, tail };
}

export function routeConfigurationParts(rc: RouteConfiguration): RouteConfigurationParts {
  const { head, tail } = routeConfigurationEnds(rc);
  return { head, vhosts: (rc.virtual_hosts ?? []).map(encodeVirtualHost), tail };
}

/** Splices the parts into the RouteConfiguration's encoding. */
export function writeRouteConfiguration(parts: RouteConfigurationParts): Uint8Array {
  return spliceVirtualHosts(parts.head, parts.vhosts, parts.tail);
}

/** Byte-identical to `encodeMessage(TypeName.RouteConfiguration, rc)`, encoding each VirtualHost object once. */
export function encodeRouteConfiguration(rc: RouteConfiguration): Uint8Array {
  return writeRouteConfiguration(routeConfigurationParts(rc));
}

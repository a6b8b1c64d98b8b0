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
import { compactBytes, envoy, type RouteConfiguration, type VirtualHost } from './proto.js';

const RouteConfigurationCodec = envoy.config.route.v3.RouteConfiguration;
const VirtualHostCodec = envoy.config.route.v3.VirtualHost;

/** Field 2 (`virtual_hosts`), wire type 2 (length-delimited). */
export const VIRTUAL_HOSTS_TAG = (2 << 3) | 2;

const vhBytes = new WeakMap<VirtualHost, Uint8Array>();

/** How many VirtualHosts were actually encoded (cache misses); for tests and benchmarks. */
export const routeConfigEncoderStats = { virtualHostEncodes: 0 };

/** The encoding of one VirtualHost (cached per object). */
export function encodeVirtualHost(vh: VirtualHost): Uint8Array {
  let bytes = vhBytes.get(vh);
  if (!bytes) {
    bytes = compactBytes(VirtualHostCodec.encode(vh).finish());
    vhBytes.set(vh, bytes);
    routeConfigEncoderStats.virtualHostEncodes++;
  }
  return bytes;
}

export const varintSize = (n: number): number => (n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x200000 ? 3 : n < 0x10000000 ? 4 : 5);

export function writeVarint(out: Uint8Array, at: number, n: number): number {
  while (n >= 0x80) {
    out[at++] = (n & 0x7f) | 0x80;
    n >>>= 7;
  }
  out[at++] = n;
  return at;
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
  /** Bytes of the whole encoding. */
  readonly size: number;
}

/** The encodings of the fields before `virtual_hosts` (`name`) and after it; either may be empty. */
export function routeConfigurationEnds(rc: RouteConfiguration): { readonly head: Uint8Array; readonly tail: Uint8Array } {
  // Everything but the virtual hosts goes through the generated codec, split around field 2.
  const { name, virtual_hosts: _vhosts, ...after } = rc;
  const head = name != null && Object.prototype.hasOwnProperty.call(rc, 'name') && name !== '' ? compactBytes(RouteConfigurationCodec.encode({ name }).finish()) : EMPTY;
  const tail = compactBytes(RouteConfigurationCodec.encode(after).finish());
  return { head, tail };
}

export function routeConfigurationParts(rc: RouteConfiguration): RouteConfigurationParts {
  const { head, tail } = routeConfigurationEnds(rc);
  const vhosts = rc.virtual_hosts;
  const parts: Uint8Array[] = [];
  let size = head.length + tail.length;
  if (vhosts != null) {
    for (const vh of vhosts) {
      const bytes = encodeVirtualHost(vh);
      parts.push(bytes);
      size += 1 + varintSize(bytes.length) + bytes.length;
    }
  }
  return { head, vhosts: parts, tail, size };
}

/** Splices the parts into `out` (at least `parts.size` bytes long; a new array by default); returns the `parts.size` bytes written. */
export function writeRouteConfiguration(parts: RouteConfigurationParts, out: Uint8Array = new Uint8Array(parts.size)): Uint8Array {
  out.set(parts.head, 0);
  let at = parts.head.length;
  for (const bytes of parts.vhosts) {
    out[at++] = VIRTUAL_HOSTS_TAG;
    at = writeVarint(out, at, bytes.length);
    out.set(bytes, at);
    at += bytes.length;
  }
  out.set(parts.tail, at);
  return out.length === parts.size ? out : out.subarray(0, parts.size);
}

/** Byte-identical to `encodeMessage(TypeName.RouteConfiguration, rc)`, encoding each VirtualHost object once. */
export function encodeRouteConfiguration(rc: RouteConfiguration): Uint8Array {
  return writeRouteConfiguration(routeConfigurationParts(rc));
}

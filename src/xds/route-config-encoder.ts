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
import { envoy, type RouteConfiguration, type VirtualHost } from './proto.js';

const RouteConfigurationCodec = envoy.config.route.v3.RouteConfiguration;
const VirtualHostCodec = envoy.config.route.v3.VirtualHost;

/** Field 2 (`virtual_hosts`), wire type 2 (length-delimited). */
const VIRTUAL_HOSTS_TAG = (2 << 3) | 2;

const vhBytes = new WeakMap<VirtualHost, Uint8Array>();

/** How many VirtualHosts were actually encoded (cache misses); for tests and benchmarks. */
export const routeConfigEncoderStats = { virtualHostEncodes: 0 };

/** The encoding of one VirtualHost (cached per object). */
export function encodeVirtualHost(vh: VirtualHost): Uint8Array {
  let bytes = vhBytes.get(vh);
  if (!bytes) {
    bytes = VirtualHostCodec.encode(vh).finish();
    vhBytes.set(vh, bytes);
    routeConfigEncoderStats.virtualHostEncodes++;
  }
  return bytes;
}

const varintSize = (n: number): number => (n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x200000 ? 3 : n < 0x10000000 ? 4 : 5);

function writeVarint(out: Uint8Array, at: number, n: number): number {
  while (n >= 0x80) {
    out[at++] = (n & 0x7f) | 0x80;
    n >>>= 7;
  }
  out[at++] = n;
  return at;
}

const EMPTY = new Uint8Array(0);

/** Byte-identical to `encodeMessage(TypeName.RouteConfiguration, rc)`, encoding each VirtualHost object once. */
export function encodeRouteConfiguration(rc: RouteConfiguration): Uint8Array {
  // Everything but the virtual hosts goes through the generated codec, split around field 2.
  const { name, virtual_hosts: vhosts, ...after } = rc;
  const head = name != null && Object.prototype.hasOwnProperty.call(rc, 'name') && name !== '' ? RouteConfigurationCodec.encode({ name }).finish() : EMPTY;
  const tail = RouteConfigurationCodec.encode(after).finish();
  const parts: Uint8Array[] = [];
  let size = head.length + tail.length;
  if (vhosts != null) {
    for (const vh of vhosts) {
      const bytes = encodeVirtualHost(vh);
      parts.push(bytes);
      size += 1 + varintSize(bytes.length) + bytes.length;
    }
  }
  const out = new Uint8Array(size);
  out.set(head, 0);
  let at = head.length;
  for (const bytes of parts) {
    out[at++] = VIRTUAL_HOSTS_TAG;
    at = writeVarint(out, at, bytes.length);
    out.set(bytes, at);
    at += bytes.length;
  }
  out.set(tail, at);
  return out;
}

/**
 * The envelope of a DiscoveryResponse read from its wire bytes: version_info (field 1), type_url
 * (4) and nonce (5), what the bench's load clients ACK and check. Everything else, the resources
 * (2) first, is skipped without being decoded: a wildcard CDS response carries every cluster of
 * the class, and decoding each one's Any (an object and a Buffer view per resource, on every
 * stream) cost the clients' processes CPU on the two cores the relay and the watcher run on. A
 * real proxy decodes its resources; the bench measures when the response arrives, not its decoding.
 */

import protobuf from 'protobufjs/minimal.js';

export interface ResponseEnvelope {
  readonly version_info: string;
  readonly type_url: string;
  readonly nonce: string;
}

const VERSION_INFO = 1;
const TYPE_URL = 4;
const NONCE = 5;

/**
 * Reads the three fields as protobuf decoding would (the last occurrence of a field wins; absent:
 * ''), with protobufjs's wire reader as src/xds/wire/scan.ts does; it throws on truncated input.
 */
export function readResponseEnvelope(bytes: Uint8Array): ResponseEnvelope {
  const reader = protobuf.Reader.create(bytes);
  let version = '';
  let typeUrl = '';
  let nonce = '';
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    const field = tag >>> 3;
    if (field === VERSION_INFO) version = reader.string();
    else if (field === TYPE_URL) typeUrl = reader.string();
    else if (field === NONCE) nonce = reader.string();
    else reader.skipType(tag & 7);
  }
  return { version_info: version, type_url: typeUrl, nonce };
}

/**
 * The envelope of a DiscoveryResponse read from its wire bytes: version_info (field 1), type_url
 * (4) and nonce (5), what the bench's load clients ACK and check. Everything else, the resources
 * (2) first, is skipped without being decoded: a wildcard CDS response carries every cluster of
 * the class, and decoding each one's Any (an object and a Buffer view per resource, on every
 * stream) cost the clients' processes CPU on the two cores the relay and the watcher run on. A
 * real proxy decodes its resources; the bench measures when the response arrives, not its decoding.
 */

export interface ResponseEnvelope {
  readonly version_info: string;
  readonly type_url: string;
  readonly nonce: string;
}

const VERSION_INFO = 1;
const TYPE_URL = 4;
const NONCE = 5;

/** Reads the three fields as protobuf decoding would (the last occurrence of a field wins; absent: ''). */
export function readResponseEnvelope(bytes: Uint8Array): ResponseEnvelope {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let version = '';
  let typeUrl = '';
  let nonce = '';
  let at = 0;
  const varint = (): number => {
    let value = 0;
    let scale = 1;
    for (;;) {
      if (at >= buf.length) throw new Error('DiscoveryResponse: truncated varint');
      const b = buf[at++] as number;
      value += (b & 0x7f) * scale;
      if (b < 0x80) return value;
      scale *= 128;
    }
  };
  while (at < buf.length) {
    const tag = varint();
    const field = Math.floor(tag / 8);
    const wire = tag & 7;
    if (wire === 0) varint();
    else if (wire === 1) at += 8;
    else if (wire === 5) at += 4;
    else if (wire === 2) {
      const length = varint();
      const end = at + length;
      if (end > buf.length) throw new Error('DiscoveryResponse: truncated field');
      if (field === VERSION_INFO) version = buf.toString('utf8', at, end);
      else if (field === TYPE_URL) typeUrl = buf.toString('utf8', at, end);
      else if (field === NONCE) nonce = buf.toString('utf8', at, end);
      at = end;
    } else throw new Error(`DiscoveryResponse: wire type ${wire} not expected`);
  }
  if (at > buf.length) throw new Error('DiscoveryResponse: truncated field');
  return { version_info: version, type_url: typeUrl, nonce };
}

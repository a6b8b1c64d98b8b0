/**
 * Reading one number out of an encoded resource without decoding it: the publish guard and the
 * version record count the LbEndpoints of every ClusterLoadAssignment of a snapshot (~22k at 10k
 * services), and a protobufjs decode builds every endpoint's address and metadata to count them.
 */
import protobuf from 'protobufjs/minimal.js';

const LENGTH_DELIMITED = 2;
/** ClusterLoadAssignment.endpoints (LocalityLbEndpoints) and LocalityLbEndpoints.lb_endpoints: both field 2. */
const ENDPOINTS_TAG = (2 << 3) | LENGTH_DELIMITED;
const LB_ENDPOINTS_TAG = ENDPOINTS_TAG;

/** The LbEndpoints of an encoded ClusterLoadAssignment, summed over its localities (`endpoints[].lb_endpoints`). */
export function countLbEndpoints(bytes: Uint8Array): number {
  const reader = protobuf.Reader.create(bytes);
  let count = 0;
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    if (tag !== ENDPOINTS_TAG) {
      reader.skipType(tag & 7);
      continue;
    }
    const end = reader.uint32() + reader.pos;
    while (reader.pos < end) {
      const inner = reader.uint32();
      if (inner === LB_ENDPOINTS_TAG) count++;
      reader.skipType(inner & 7);
    }
  }
  return count;
}

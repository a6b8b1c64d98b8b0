/**
 * Encodes plain `$Properties` messages with the per-type writers generated at build time
 * (scripts/gen-wire-encoders.mjs → src/xds/gen/wire-encoders.js): the same bytes protobufjs's
 * generated `encode` writes (fields by id, the same presence and default rules, packed numeric
 * lists, map entries in key insertion order), without its per-write objects or a runtime walk
 * over field tables. Whatever it does not write exactly as protobufjs would (a type missing from
 * the descriptor, a group, `$unknowns`, a 64-bit value that is not a number, bytes given as base64
 * text, a lone surrogate) throws UnsupportedValue, and the caller encodes that message with
 * protobufjs instead.
 *
 * Sub-messages of the shared types (one object reused by many resources: a transport socket, a
 * retry policy, a config source) are written once per object and their bytes reused (runtime.ts).
 */
import wireEncoders from '../gen/wire-encoders.js';
import { wireRuntime } from './runtime.js';
import type { ByteSlab } from './slab.js';
import { UnsupportedValue, VIEW, WireWriter } from './writer.js';

const writers = wireEncoders(wireRuntime);

let writer = new WireWriter();
/** A writer that grew past this is dropped after use, so that one huge message does not stay pinned. */
const KEEP_BYTES = 4 << 20;

/**
 * The encoding of `message` as `typeName`, or undefined when the fast writer does not handle it
 * (the caller then uses protobufjs). The bytes are a copy of their own, or in `into` when a slab;
 * `into` VIEW: a view of the shared writer's buffer, valid until the next encoding.
 */
export function encodeFast(typeName: string, message: object, into?: ByteSlab | typeof VIEW): Uint8Array | undefined {
  const write = writers.get(typeName);
  if (!write) return undefined;
  const w = writer.reset();
  try {
    write(w, message, 0);
    return w.finish(into);
  } catch (e) {
    if (e instanceof UnsupportedValue) return undefined;
    throw e;
  } finally {
    if (w.buf.length > KEEP_BYTES) writer = new WireWriter();
  }
}

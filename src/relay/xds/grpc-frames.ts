/**
 * gRPC message frames laid out by the relay, written to the HTTP/2 stream as they are.
 *
 * grpc-js frames every message it writes (a 5-byte header: compressed flag 0, length as uint32 BE;
 * https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md#requests) into a fresh buffer, a
 * copy of the message per stream. A switch pushes the very same response to up to every stream
 * (SotwCache), so the relay frames each response once and hands that frame to every stream's HTTP/2
 * stream: no copy per stream, nothing to collect after the switch.
 *
 * grpc-js has no public way to write a framed message, so `frameWriter` uses the base call under a
 * server call without interceptors (ServerDuplexStreamImpl.call: `stream`, `maybeSendMetadata`,
 * `checkCancelled`, grpc-js 1.14), as abort-call.ts does; when the shape differs it writes the
 * message through the call (grpc-js frames it again), so nothing depends on the shape but speed.
 */
import * as grpc from '@grpc/grpc-js';
import type { WritableCall } from './fanout.js';

export const FRAME_HEADER_BYTES = 5;

/** A gRPC message frame: header + message. */
export type Frame = Buffer;

/** An uncompressed frame of `messageBytes`, header written in place at `out[at]`. */
function writeHeader(out: Buffer, at: number, messageBytes: number): void {
  out[at] = 0; // not compressed
  out.writeUInt32BE(messageBytes, at + 1);
}

/** A frame of its own for a message (one copy, as grpc-js makes). */
export function frameOf(message: Uint8Array): Frame {
  const out = Buffer.allocUnsafe(FRAME_HEADER_BYTES + message.byteLength);
  writeHeader(out, 0, message.byteLength);
  out.set(message, FRAME_HEADER_BYTES);
  return out;
}

/** A buffer of `messageBytes` with its frame header written; the caller writes the message from FRAME_HEADER_BYTES on. */
export function allocFrame(messageBytes: number): Frame {
  const out = Buffer.allocUnsafe(FRAME_HEADER_BYTES + messageBytes);
  writeHeader(out, 0, messageBytes);
  return out;
}

/** The message a frame carries (a view, no copy). */
export const messageOf = (frame: Frame): Buffer => frame.subarray(FRAME_HEADER_BYTES);

/** What the relay uses of grpc-js's base server call. */
interface BaseCall {
  readonly stream: { write(chunk: Buffer, cb: (err?: Error | null) => void): boolean };
  readonly maxSendMessageSize?: unknown;
  readonly callEventTracker?: { addMessageSent(): void } | null;
  maybeSendMetadata(): void;
  checkCancelled(): boolean;
  sendStatus(status: { code: grpc.status; details: string; metadata: null }): void;
}

function baseCallOf(call: object): BaseCall | undefined {
  const base = (call as { call?: Partial<BaseCall> }).call;
  if (
    typeof base?.stream?.write !== 'function' ||
    typeof base.maybeSendMetadata !== 'function' ||
    typeof base.checkCancelled !== 'function' ||
    typeof base.sendStatus !== 'function'
  )
    return undefined;
  return base as BaseCall;
}

export interface FrameWriter extends WritableCall {
  /** True when frames go straight to the HTTP/2 stream (false: through grpc-js's write). */
  readonly direct: boolean;
  write(frame: Frame, cb: (err?: Error | null) => void): boolean;
}

/** Writes frames to a grpc-js server call: to its HTTP/2 stream when it can, else through the call. */
export function frameWriter(call: grpc.ServerDuplexStream<object, object | Uint8Array>): FrameWriter {
  const base = baseCallOf(call);
  const throughCall = (frame: Frame, cb: (err?: Error | null) => void): boolean => call.write(messageOf(frame), cb);
  if (!base) return { direct: false, write: throughCall };
  return {
    direct: true,
    write(frame, cb) {
      const max = base.maxSendMessageSize;
      // Over the limit: grpc-js's own write ends the call with RESOURCE_EXHAUSTED, as before.
      if (typeof max === 'number' && max !== -1 && frame.byteLength - FRAME_HEADER_BYTES > max)
        return throughCall(frame, cb);
      if (base.checkCancelled()) {
        cb(new Error('the call was cancelled'));
        return false;
      }
      base.maybeSendMetadata();
      return base.stream.write(frame, (err) => {
        if (err) base.sendStatus({ code: grpc.status.INTERNAL, details: 'Internal server error', metadata: null });
        else base.callEventTracker?.addMessageSent();
        cb(err);
      });
    },
  };
}

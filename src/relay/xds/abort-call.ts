/**
 * Resets the HTTP/2 stream under a grpc-js server call (RST_STREAM CANCEL). A proxy that does not
 * read never lets a response write finish, and grpc-js sends a call's status only after its
 * writes: ending such a call with a status would wait forever. grpc-js has no public way to reset
 * a server call, so this walks its call chain (ServerDuplexStreamImpl.call → …nextCall → the base
 * call's `stream`, grpc-js 1.14) and does nothing when the shape differs; the caller still ends
 * the call with a status, which is what a grpc-js without that shape then relies on.
 */
import { constants, type ServerHttp2Stream } from 'node:http2';

interface CallChainLink {
  readonly call?: CallChainLink;
  readonly nextCall?: CallChainLink;
  readonly stream?: unknown;
}

const isHttp2Stream = (s: unknown): s is ServerHttp2Stream =>
  typeof s === 'object' && s !== null && typeof (s as ServerHttp2Stream).close === 'function' && 'rstCode' in s;

/** True when the stream under `call` was found and reset. */
export function resetCallStream(call: object): boolean {
  let link: CallChainLink | undefined = (call as CallChainLink).call;
  for (let depth = 0; link && depth < 8; depth++) {
    if (isHttp2Stream(link.stream)) {
      if (!link.stream.closed && !link.stream.destroyed) link.stream.close(constants.NGHTTP2_CANCEL);
      return true;
    }
    link = link.nextCall;
  }
  return false;
}

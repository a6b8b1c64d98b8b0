import type * as grpc from '@grpc/grpc-js';

/** Ends a stream with this gRPC status; the message reaches the proxy. */
export class StatusError extends Error {
  constructor(
    readonly code: grpc.status,
    message: string,
  ) {
    super(message);
  }
}

/** A client went over one of the relay's limits (README "Limits"). */
export class LimitExceeded extends StatusError {}

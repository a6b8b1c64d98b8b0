/** HTTPFaultInjection → `envoy.filters.http.fault` per-route config (istiod's TranslateFault). */
import type { HTTPFaultInjection } from '../../model/istio.js';
import { durationMs, type envoy } from '../../xds/proto.js';
import { integerToFraction, percentToFraction } from './percent.js';

export type HTTPFault = envoy.extensions.filters.http.fault.v3.HTTPFault.$Properties;

/** gRPC status names as Istio accepts them in `abort.grpcStatus`. */
const GRPC_STATUS: Readonly<Record<string, number>> = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
};

export const grpcStatusCode = (name: string): number | undefined => GRPC_STATUS[name.toUpperCase()];

/** Undefined when neither a delay nor an abort can be expressed. */
export function translateFault(fault: HTTPFaultInjection): HTTPFault | undefined {
  const out: HTTPFault = {};
  if (fault.delay) {
    // istiod falls back to the deprecated integer `percent`, which meshsnap's model folds away: 0.
    const percentage = fault.delay.percentage ? percentToFraction(fault.delay.percentage.value) : integerToFraction(0);
    out.delay = { fixed_delay: durationMs(fault.delay.fixedDelayMs), percentage };
  }
  const abort = fault.abort;
  if (abort) {
    const code =
      abort.httpStatus !== undefined
        ? { http_status: abort.httpStatus }
        : abort.grpcStatus !== undefined
          ? grpcAbort(abort.grpcStatus)
          : undefined;
    if (code)
      out.abort = { ...code, ...(abort.percentage ? { percentage: percentToFraction(abort.percentage.value) } : {}) };
  }
  return out.delay || out.abort ? out : undefined;
}

function grpcAbort(status: string): { grpc_status: number } | undefined {
  const code = grpcStatusCode(status) ?? (/^\d+$/.test(status) ? Number(status) : undefined);
  return code === undefined ? undefined : { grpc_status: code };
}

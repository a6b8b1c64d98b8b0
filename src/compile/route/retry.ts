/**
 * HTTPRetry → Envoy RetryPolicy (istiod's retry.ConvertPolicy).
 *
 * The default (no `retries` on the route) is istiod's current one. Since Istio 1.24 it no longer
 * lists 503 in retriable_status_codes (the `retriable-status-codes` condition stays, matching none).
 */
import type { HTTPRetry } from '../../model/istio.js';
import { durationMs, type Any, type envoy } from '../../xds/proto.js';
import { frozenPerSource } from '../intern.js';

export type RetryPolicy = envoy.config.route.v3.RetryPolicy.$Properties;

export const DEFAULT_RETRY_ON = 'connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes';
const DEFAULT_NUM_RETRIES = 2;
const HOST_SELECTION_RETRY_MAX_ATTEMPTS = 5;

/** PreviousHostsPredicate has no fields, so its encoding is empty (the type is not in our generated set). */
const PREVIOUS_HOSTS: Any = {
  type_url: 'type.googleapis.com/envoy.extensions.retry.host.previous_hosts.v3.PreviousHostsPredicate',
  value: new Uint8Array(0),
};
/** PreviousPrioritiesConfig { update_frequency: 2 }: field 1, varint 2. */
const PREVIOUS_PRIORITIES: Any = {
  type_url: 'type.googleapis.com/envoy.extensions.retry.priority.previous_priorities.v3.PreviousPrioritiesConfig',
  value: new Uint8Array([0x08, 0x02]),
};

const previousHostsPredicate = () => [
  { name: 'envoy.retry_host_predicates.previous_hosts', typed_config: PREVIOUS_HOSTS },
];

function base(consistentHash: boolean): RetryPolicy {
  const policy: RetryPolicy = { retry_on: DEFAULT_RETRY_ON, num_retries: { value: DEFAULT_NUM_RETRIES } };
  // Retrying on another host would defeat a consistent hash.
  if (!consistentHash) policy.retry_host_predicate = previousHostsPredicate();
  policy.host_selection_retry_max_attempts = HOST_SELECTION_RETRY_MAX_ATTEMPTS;
  return policy;
}

// The defaults are shared by most routes (istiod caches them too); encoding never mutates them.
const DEFAULT_POLICY = base(false);
const DEFAULT_CONSISTENT_HASH_POLICY = base(true);

/** Undefined means "no retries" (attempts 0). */
export function translateRetry(retry: HTTPRetry | undefined, consistentHash: boolean): RetryPolicy | undefined {
  if (!retry) return consistentHash ? DEFAULT_CONSISTENT_HASH_POLICY : DEFAULT_POLICY;
  return retry.attempts > 0 ? translated(retry, consistentHash) : undefined;
}

/**
 * Per route's `retries`, without and with a consistent hash: a VirtualService route is translated
 * for every listener port and for sidecars and proxyless clients alike, and gives the same policy.
 */
const translated = frozenPerSource(retryPolicy);

function retryPolicy(retry: HTTPRetry, consistentHash: boolean): RetryPolicy {
  const out = base(consistentHash);
  out.num_retries = { value: retry.attempts };
  if (retry.retryOn) {
    const { conditions, codes } = parseRetryOn(retry.retryOn);
    out.retry_on =
      codes.length && !conditions.includes('retriable-status-codes')
        ? [...conditions, 'retriable-status-codes'].join(',')
        : conditions.join(',');
    if (codes.length) out.retriable_status_codes = codes;
  }
  if (retry.perTryTimeoutMs !== undefined) out.per_try_timeout = durationMs(retry.perTryTimeoutMs);
  // Said explicitly, it wins over the consistent-hash default either way (istiod).
  if (retry.retryIgnorePreviousHosts === true) out.retry_host_predicate = previousHostsPredicate();
  else if (retry.retryIgnorePreviousHosts === false) delete out.retry_host_predicate;
  if (retry.retryRemoteLocalities)
    out.retry_priority = { name: 'envoy.retry_priorities.previous_priorities', typed_config: PREVIOUS_PRIORITIES };
  if (retry.backoffMs !== undefined) out.retry_back_off = { base_interval: durationMs(retry.backoffMs) };
  return out;
}

/** Numeric entries that are HTTP status codes become retriable status codes; the rest are conditions. */
export function parseRetryOn(retryOn: string): { conditions: string[]; codes: number[] } {
  const conditions: string[] = [];
  const codes: number[] = [];
  for (const raw of retryOn.split(',')) {
    const part = raw.trim();
    if (!part) continue;
    if (/^\d+$/.test(part) && isHttpStatus(Number(part))) codes.push(Number(part));
    else conditions.push(part);
  }
  return { conditions, codes };
}

/** Go's http.StatusText knows these codes; istiod only accepts those. */
const KNOWN_STATUS = new Set([
  100, 101, 102, 103, 200, 201, 202, 203, 204, 205, 206, 207, 208, 226, 300, 301, 302, 303, 304, 305, 307, 308, 400,
  401, 402, 403, 404, 405, 406, 407, 408, 409, 410, 411, 412, 413, 414, 415, 416, 417, 418, 421, 422, 423, 424, 425,
  426, 428, 429, 431, 451, 500, 501, 502, 503, 504, 505, 506, 507, 508, 510, 511,
]);
const isHttpStatus = (n: number): boolean => KNOWN_STATUS.has(n);

/** istiod's `default` route for a service port without a VirtualService (BuildDefaultHTTPOutboundRoute). */
import type { Route } from '../../xds/proto.js';
import { flat } from '../../model/flat-string.js';
import { outboundClusterName } from '../names.js';
import type { CompileContext, ResolvedDestinationRule } from '../context.js';
import { NO_TIMEOUT } from './action.js';
import { hashPolicyList, serviceHash } from './hash-policy.js';
import { CATCH_ALL_MATCH } from './match.js';
import { translateRetry } from './retry.js';

export const DEFAULT_ROUTE_NAME = 'default';

export function defaultRoute(
  ctx: CompileContext,
  hostname: string,
  port: number,
  rule: ResolvedDestinationRule | undefined,
): Route {
  const hash = hashPolicyList(serviceHash(rule, port));
  // The mesh's defaultHttpRetryPolicy when set (`attempts: 0`: none), as BuildDefaultHTTPOutboundRoute.
  const retry = translateRetry(ctx.mesh.defaultHttpRetryPolicy, false);
  return {
    name: DEFAULT_ROUTE_NAME,
    match: CATCH_ALL_MATCH,
    route: {
      cluster: outboundClusterName(port, '', hostname),
      timeout: NO_TIMEOUT,
      max_grpc_timeout: NO_TIMEOUT,
      // istiod keeps the previous-hosts predicate here even with a hash policy.
      ...(retry ? { retry_policy: retry } : {}),
      ...(hash ? { hash_policy: hash } : {}),
    },
    decorator: { operation: flat(`${hostname}:${port}/*`) },
  };
}

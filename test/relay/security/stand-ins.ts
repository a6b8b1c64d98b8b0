/** Stand-ins the relay security tests share: a TokenReview that knows tokens by pattern, a logger that records. */
import type { Logger } from '../../../src/log.js';
import { tokenReviewAuthenticator } from '../../../src/relay/security/token-review.js';

/**
 * A TokenReview stand-in (audience `istio-ca`, trust domain `cluster.local`): a token matching
 * `token` is the service account its two groups name (namespace, name); any other is refused.
 */
export const serviceAccountReview = (token: RegExp) =>
  tokenReviewAuthenticator({
    review: (t) => {
      const m = token.exec(t);
      return Promise.resolve(
        m
          ? {
              authenticated: true,
              user: { username: `system:serviceaccount:${m[1]}:${m[2]}`, groups: ['system:serviceaccounts'] },
              audiences: ['istio-ca'],
            }
          : { authenticated: false },
      );
    },
    audiences: ['istio-ca'],
    trustDomain: 'cluster.local',
  });

/** A logger that keeps every structured `log` call (event and a copy of its fields) in `logged`. */
export function capturingLogger(): {
  readonly logged: { event: string; fields: Record<string, unknown> }[];
  readonly logger: Logger;
} {
  const logged: { event: string; fields: Record<string, unknown> }[] = [];
  const logger: Logger = {
    log: (_level, event, fields = {}) => void logged.push({ event, fields: { ...fields } }),
    debug: () => {},
    info: () => {},
    warn: () => {},
    error: () => {},
  };
  return { logged, logger };
}

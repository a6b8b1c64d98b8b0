/**
 * `explain`: where a request goes through a proxy's served config, and why, following Envoy's
 * documented matching rules. Pure (no store, no Node built-ins): the CLI, the API and Workers share it.
 */
export { across, answerDigest, answerParts, type AcrossAnswer, type AnswerChange } from './across.js';
export { explain } from './explain.js';
export { defaultAuthority } from './http-step.js';
export { matchFilterChain, type ConnectionView } from './filter-chain-match.js';
export { isIp } from './ip.js';
export type { JsonObject } from './json.js';
export { matchListener } from './listener-match.js';
export { matchRoute, firstMatchingRoute, type HttpRequestView } from './route-match.js';
export { acrossText, explanationText } from './text.js';
export type * from './types.js';
export { domainMatches, matchVirtualHost } from './vhost-match.js';

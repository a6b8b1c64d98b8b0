/**
 * LDS: the Listeners of sidecars (outbound, shared by all; inbound, per workload shape) and of
 * proxyless gRPC clients. Each kind lives in src/compile/listener/.
 */
export { buildOutboundListeners } from './listener/outbound.js';
export { buildInbound, type InboundShape } from './listener/inbound.js';
export { buildProxylessListeners } from './listener/proxyless.js';
export { buildProxylessServerListeners } from './listener/proxyless-server.js';

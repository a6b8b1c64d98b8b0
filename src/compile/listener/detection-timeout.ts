/** The listener_filters_timeout of listeners that sniff: MeshConfig.protocolDetectionTimeout. */
import type { CompileContext } from '../context.js';
import { durationMs, type Duration } from '../../xds/proto.js';

const NO_TIMEOUT: Duration = Object.freeze({ seconds: 0 });

/** 0, Istio's default, is no timeout: a slow client is never sent on before its protocol is known. */
export const detectionTimeout = (ctx: CompileContext): Duration =>
  ctx.mesh.protocolDetectionTimeoutMs ? durationMs(ctx.mesh.protocolDetectionTimeoutMs) : NO_TIMEOUT;
